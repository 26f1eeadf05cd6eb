#pragma once
// A node's forwarding table, flat: for each destination host, the equal-cost egress
// ports, as one array of ports and an offset per destination. Compiled before the run.
#include <cstdint>
#include <span>
#include <vector>

#include "sim/packet.h"
#include "sim/packet_sink.h"

namespace fabricsim {

struct RouteTable {
  std::vector<std::uint32_t> offset;  // size destinations + 1, into ports
  std::vector<PortIndex> ports;

  std::size_t destinations() const { return offset.empty() ? 0 : offset.size() - 1; }
  std::span<const PortIndex> to(HostId dst) const {
    if (dst >= destinations()) return {};
    return {ports.data() + offset[dst], ports.data() + offset[dst + 1]};
  }
};

}  // namespace fabricsim
