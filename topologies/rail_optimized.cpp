#include "topologies/rail_optimized.h"

#include <stdexcept>

namespace fabricsim {

LeafSpineSpec as_leaf_spine(const RailOptimizedSpec& s) {
  LeafSpineSpec l;
  l.leaves = s.rails;
  l.hosts_per_leaf = s.nodes;
  l.spines = s.spines;
  l.links_per_pair = s.links_per_pair;
  l.host_link = s.nic_link;
  l.fabric_link = s.fabric_link;
  return l;
}

void build_rail_optimized(Topology& t, const RailOptimizedSpec& spec, const std::vector<std::uint32_t>& endpoints,
                          const std::string& prefix) {
  if (endpoints.size() != static_cast<std::size_t>(spec.nodes) * static_cast<std::size_t>(spec.rails)) {
    throw std::invalid_argument("rail-optimized fabric needs nodes * rails endpoints");
  }
  // Leaf r takes NIC r of node 0, 1, ...
  std::vector<std::uint32_t> by_rail;
  by_rail.reserve(endpoints.size());
  for (int r = 0; r < spec.rails; ++r) {
    for (int n = 0; n < spec.nodes; ++n) by_rail.push_back(endpoints[static_cast<std::size_t>(n * spec.rails + r)]);
  }
  build_leaf_spine(t, as_leaf_spine(spec), by_rail, prefix, {"rail", "nic-rail", "rail-spine"});
}

Topology rail_optimized_topology(const RailOptimizedSpec& spec) {
  Topology t;
  std::vector<std::uint32_t> nics;
  for (int n = 0; n < spec.nodes; ++n) {
    for (int r = 0; r < spec.rails; ++r) nics.push_back(t.add_host("n" + std::to_string(n) + ".nic" + std::to_string(r), "nic"));
  }
  build_rail_optimized(t, spec, nics);
  return t;
}

}  // namespace fabricsim
