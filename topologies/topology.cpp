#include "topologies/topology.h"

#include <stdexcept>

namespace fabricsim {

std::uint32_t Topology::add_node(std::string name, NodeKind kind) {
  const auto index = static_cast<std::uint32_t>(nodes_.size());
  if (!by_name_.emplace(name, index).second) throw std::invalid_argument("duplicate node name '" + name + "'");
  auto& list = kind == NodeKind::kHost ? hosts_ : switches_;
  nodes_.push_back({std::move(name), kind, static_cast<std::uint32_t>(list.size())});
  list.push_back(index);
  return index;
}

std::uint32_t Topology::add_host(std::string name) { return add_node(std::move(name), NodeKind::kHost); }
std::uint32_t Topology::add_switch(std::string name) { return add_node(std::move(name), NodeKind::kSwitch); }

void Topology::connect(std::uint32_t a, std::uint32_t b, Bandwidth bandwidth, Time latency, std::string tier) {
  if (a >= nodes_.size() || b >= nodes_.size()) throw std::out_of_range("link end out of range");
  if (a == b) throw std::invalid_argument("link from '" + nodes_[a].name + "' to itself");
  links_.push_back({a, b, bandwidth, latency, std::move(tier)});
}

std::optional<std::uint32_t> Topology::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

}  // namespace fabricsim
