#pragma once
// The topology graph: named endpoints (hosts, GPUs) and switches and the cables between
// them, as built from a config and before anything is compiled for the event core.
// Builders produce it; compile_network() turns it into a Network with flat routing
// tables. Endpoints never forward; every other node does.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/core/time.h"
#include "topologies/link_spec.h"

namespace fabricsim {

enum class NodeKind : std::uint8_t { kHost, kSwitch };

struct TopologyNode {
  std::string name;
  NodeKind kind;
  std::uint32_t kind_index;  // host number among hosts, or switch number among switches
  std::string role;          // "host", "gpu", "nic", "nvswitch", "leaf", "spine", "edge", ...
  Bandwidth reduce_rate{0};  // a switch that reduces in the network (NVLink SHARP): its rate
};

struct TopologyLink {
  std::uint32_t a;  // node indices
  std::uint32_t b;
  Bandwidth bandwidth;
  Time latency;
  std::string tier;   // what the builder calls it ("host", "fabric", "nvlink", "pcie", ...)
  std::uint32_t cost;  // routing weight: paths minimise the sum (1 per hop unless a builder says)
  // Credit-based links (InfiniBand, NVLink, PCIe) never drop: a port sends only into
  // buffer the far end has granted.
  FlowControl flow_control = FlowControl::kNone;
  std::int64_t credit_bytes = 0;  // per class; 0: sized from the link (see LinkSpec)
};

// How switches choose among next hops: all least-cost paths (ECMP sets), or
// dimension-order on a torus (one path, X then Y then Z, shorter way round).
enum class RoutingScheme : std::uint8_t { kShortestPaths, kDimensionOrder };

struct TorusLayout {
  std::array<int, 3> dims{1, 1, 1};
  std::vector<std::array<int, 3>> switch_coords;  // by switch number
  std::vector<std::uint32_t> switch_at;           // by x + X*(y + Y*z): switch number
};

class Topology {
 public:
  std::uint32_t add_host(std::string name, std::string role = "host");
  std::uint32_t add_switch(std::string name, std::string role = "switch");
  void connect(std::uint32_t a, std::uint32_t b, const LinkSpec& link, std::string tier, std::uint32_t cost = 1);
  // An Ethernet link (no link-level credits).
  void connect(std::uint32_t a, std::uint32_t b, Bandwidth bandwidth, Time latency, std::string tier, std::uint32_t cost = 1) {
    connect(a, b, LinkSpec{bandwidth, latency}, std::move(tier), cost);
  }

  const std::vector<TopologyNode>& nodes() const { return nodes_; }
  const std::vector<TopologyLink>& links() const { return links_; }
  const TopologyNode& node(std::uint32_t i) const { return nodes_[i]; }
  std::size_t host_count() const { return hosts_.size(); }
  std::size_t switch_count() const { return switches_.size(); }
  // Node index of host h / switch s.
  std::uint32_t host_node(std::uint32_t h) const { return hosts_[h]; }
  std::uint32_t switch_node(std::uint32_t s) const { return switches_[s]; }
  std::optional<std::uint32_t> find(const std::string& name) const;
  void set_reduce_rate(std::uint32_t node, Bandwidth rate) { nodes_[node].reduce_rate = rate; }
  // What-if changes before the network is compiled (topologies/faults.h).
  void set_link_rate(std::size_t i, Bandwidth bandwidth, Time latency) {
    links_[i].bandwidth = bandwidth;
    links_[i].latency = latency;
  }
  // Drops the links whose `drop` entry is set; the others keep their order.
  void remove_links(const std::vector<bool>& drop);
  std::size_t count_role(const std::string& role) const;

  RoutingScheme routing() const { return routing_; }
  void set_routing(RoutingScheme r) { routing_ = r; }
  const std::optional<TorusLayout>& torus() const { return torus_; }
  void set_torus(TorusLayout layout) { torus_ = std::move(layout); }

 private:
  std::uint32_t add_node(std::string name, NodeKind kind, std::string role);

  std::vector<TopologyNode> nodes_;
  std::vector<TopologyLink> links_;
  std::vector<std::uint32_t> hosts_;
  std::vector<std::uint32_t> switches_;
  std::unordered_map<std::string, std::uint32_t> by_name_;
  RoutingScheme routing_ = RoutingScheme::kShortestPaths;
  std::optional<TorusLayout> torus_;
};

// Adds `n` hosts named prefix0, prefix1, ... and returns their node indices.
std::vector<std::uint32_t> add_hosts(Topology& t, int n, const std::string& prefix, const std::string& role = "host");

}  // namespace fabricsim
