#include "topologies/topology.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim {

std::uint32_t Topology::add_node(std::string name, NodeKind kind, std::string role) {
  const auto index = static_cast<std::uint32_t>(nodes_.size());
  if (!by_name_.emplace(name, index).second) throw std::invalid_argument("duplicate node name '" + name + "'");
  auto& list = kind == NodeKind::kHost ? hosts_ : switches_;
  nodes_.push_back({std::move(name), kind, static_cast<std::uint32_t>(list.size()), std::move(role)});
  list.push_back(index);
  return index;
}

std::uint32_t Topology::add_host(std::string name, std::string role) {
  return add_node(std::move(name), NodeKind::kHost, std::move(role));
}
std::uint32_t Topology::add_switch(std::string name, std::string role) {
  return add_node(std::move(name), NodeKind::kSwitch, std::move(role));
}

void Topology::connect(std::uint32_t a, std::uint32_t b, const LinkSpec& link, std::string tier, std::uint32_t cost) {
  if (a >= nodes_.size() || b >= nodes_.size()) throw std::out_of_range("link end out of range");
  if (a == b) throw std::invalid_argument("link from '" + nodes_[a].name + "' to itself");
  if (cost == 0) throw std::invalid_argument("link cost must be at least 1");
  links_.push_back({a, b, link.bandwidth, link.latency, std::move(tier), cost, link.flow_control, link.credit_bytes});
}

std::optional<std::uint32_t> Topology::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::size_t Topology::count_role(const std::string& role) const {
  return static_cast<std::size_t>(
      std::count_if(nodes_.begin(), nodes_.end(), [&](const TopologyNode& n) { return n.role == role; }));
}

std::vector<std::uint32_t> add_hosts(Topology& t, int n, const std::string& prefix, const std::string& role) {
  std::vector<std::uint32_t> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(t.add_host(prefix + std::to_string(i), role));
  return out;
}

void Topology::remove_links(const std::vector<bool>& drop) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    if (i < drop.size() && drop[i]) continue;
    links_[kept++] = links_[i];
  }
  links_.resize(kept);
}

}  // namespace fabricsim
