#pragma once
// The topology graph: named hosts and switches and the cables between them, as built
// from a config and before anything is compiled for the event core. Builders produce
// it; compile_network() turns it into a Network with flat routing tables.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/time.h"

namespace fabricsim {

enum class NodeKind : std::uint8_t { kHost, kSwitch };

struct TopologyNode {
  std::string name;
  NodeKind kind;
  std::uint32_t kind_index;  // host number among hosts, or switch number among switches
};

struct TopologyLink {
  std::uint32_t a;  // node indices
  std::uint32_t b;
  Bandwidth bandwidth;
  Time latency;
  std::string tier;  // what the builder calls it ("host", "fabric", ...), for reports
};

class Topology {
 public:
  std::uint32_t add_host(std::string name);
  std::uint32_t add_switch(std::string name);
  void connect(std::uint32_t a, std::uint32_t b, Bandwidth bandwidth, Time latency, std::string tier);

  const std::vector<TopologyNode>& nodes() const { return nodes_; }
  const std::vector<TopologyLink>& links() const { return links_; }
  const TopologyNode& node(std::uint32_t i) const { return nodes_[i]; }
  std::size_t host_count() const { return hosts_.size(); }
  std::size_t switch_count() const { return switches_.size(); }
  // Node index of host h / switch s.
  std::uint32_t host_node(std::uint32_t h) const { return hosts_[h]; }
  std::uint32_t switch_node(std::uint32_t s) const { return switches_[s]; }
  std::optional<std::uint32_t> find(const std::string& name) const;

 private:
  std::uint32_t add_node(std::string name, NodeKind kind);

  std::vector<TopologyNode> nodes_;
  std::vector<TopologyLink> links_;
  std::vector<std::uint32_t> hosts_;
  std::vector<std::uint32_t> switches_;
  std::unordered_map<std::string, std::uint32_t> by_name_;
};

}  // namespace fabricsim
