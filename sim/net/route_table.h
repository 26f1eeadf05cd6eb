#pragma once
// A node's forwarding table, keyed by destination group. Hosts that hang off the same
// attachment (an edge switch, a rail leaf, a torus router) have the same next hops at
// every node but the few next to them, so a table holds one entry per group plus a small
// window of per-host exceptions; its size grows with the fabric, not with switches x
// hosts. Entries name interned candidate-port sets, each in ascending port order.
// Compiled before the run; packets carry their destination's group.
#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/packet.h"
#include "sim/net/packet_sink.h"

namespace fabricsim {

struct RouteTable {
  static constexpr std::uint32_t kNoException = UINT32_MAX;

  // Set i is ports[set_offset[i] .. set_offset[i + 1]); set 0 is empty (unreachable).
  std::vector<std::uint32_t> set_offset{0, 0};
  std::vector<PortIndex> ports;
  // The set per destination group; empty when every group has `default_set`.
  std::vector<std::uint32_t> by_group;
  std::uint32_t default_set = 0;
  // Per-host exceptions for hosts first_host .. first_host + by_host.size() - 1.
  HostId first_host = 0;
  std::vector<std::uint32_t> by_host;  // a set, or kNoException: the group's entry holds

  std::uint32_t set_for(HostId dst, std::uint32_t group) const {
    const std::uint32_t i = dst - first_host;  // wraps below first_host: out of the window
    if (i < by_host.size() && by_host[i] != kNoException) return by_host[i];
    return by_group.empty() ? default_set : by_group[group];
  }
  std::span<const PortIndex> set(std::uint32_t s) const {
    return {ports.data() + set_offset[s], ports.data() + set_offset[s + 1]};
  }
  std::span<const PortIndex> to(HostId dst, std::uint32_t group) const { return set(set_for(dst, group)); }
  // The same for a header that may be stale (prefetching): empty where an index is out
  // of range instead of reading past a table.
  std::span<const PortIndex> to_checked(HostId dst, std::uint32_t group) const {
    const std::uint32_t i = dst - first_host;
    std::uint32_t s = default_set;
    if (i < by_host.size() && by_host[i] != kNoException) {
      s = by_host[i];
    } else if (!by_group.empty()) {
      if (group >= by_group.size()) return {};
      s = by_group[group];
    }
    if (s + 1 >= set_offset.size() || set_offset[s + 1] > ports.size()) return {};
    return set(s);
  }
  std::size_t set_count() const { return set_offset.size() - 1; }
};

}  // namespace fabricsim
