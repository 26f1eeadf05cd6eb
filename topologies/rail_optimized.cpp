#include "topologies/rail_optimized.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim {

LeafSpineSpec as_leaf_spine(const RailOptimizedSpec& s) {
  LeafSpineSpec l;
  l.leaves = s.rails;
  l.hosts_per_leaf = s.nodes_per_leaf > 0 ? s.nodes_per_leaf : s.nodes;
  l.spines = s.spines;
  l.links_per_pair = s.links_per_pair;
  l.host_link = s.nic_link;
  l.fabric_link = s.fabric_link;
  return l;
}

namespace {
// Three tiers: units (pods) of rail switches and spines, joined by core groups.
void build_rail_units(Topology& t, const RailOptimizedSpec& spec, const std::vector<std::uint32_t>& endpoints,
                      const std::string& prefix) {
  if (spec.cores < spec.spines || spec.cores % spec.spines != 0) {
    throw std::invalid_argument("a rail-optimized fabric of several units needs cores, a multiple of spines");
  }
  const int per_group = spec.cores / spec.spines;
  std::vector<std::uint32_t> cores;
  for (int c = 0; c < spec.cores; ++c) cores.push_back(t.add_switch(prefix + "core" + std::to_string(c), "core"));
  for (int u = 0; u < spec.units(); ++u) {
    const std::string unit = prefix + "u" + std::to_string(u) + ".";
    std::vector<std::uint32_t> rails, spines;
    for (int r = 0; r < spec.rails; ++r) {
      rails.push_back(t.add_switch(unit + "rail" + std::to_string(r), "rail"));
      if (spec.sharp_bandwidth.bits_per_second > 0) t.set_reduce_rate(rails.back(), spec.sharp_bandwidth);
    }
    for (int s = 0; s < spec.spines; ++s) spines.push_back(t.add_switch(unit + "spine" + std::to_string(s), "spine"));
    const int first = u * spec.nodes_per_leaf;
    const int last = std::min(spec.nodes, first + spec.nodes_per_leaf);
    for (int r = 0; r < spec.rails; ++r) {
      for (int n = first; n < last; ++n) {
        t.connect(endpoints[static_cast<std::size_t>(n * spec.rails + r)], rails[static_cast<std::size_t>(r)],
                  spec.nic_link, "nic-rail");
      }
    }
    for (std::uint32_t rail : rails) {
      for (std::uint32_t spine : spines) {
        for (int k = 0; k < spec.links_per_pair; ++k) {
          t.connect(rail, spine, spec.fabric_link, "rail-spine");
        }
      }
    }
    for (int s = 0; s < spec.spines; ++s) {
      for (int c = 0; c < per_group; ++c) {
        t.connect(spines[static_cast<std::size_t>(s)], cores[static_cast<std::size_t>(s * per_group + c)],
                  spec.fabric_link, "spine-core");
      }
    }
  }
}
}  // namespace

void build_rail_optimized(Topology& t, const RailOptimizedSpec& spec, const std::vector<std::uint32_t>& endpoints,
                          const std::string& prefix) {
  if (endpoints.size() != static_cast<std::size_t>(spec.nodes) * static_cast<std::size_t>(spec.rails)) {
    throw std::invalid_argument("rail-optimized fabric needs nodes * rails endpoints");
  }
  if (spec.units() > 1) {
    build_rail_units(t, spec, endpoints, prefix);
    return;
  }
  // Leaf r takes NIC r of node 0, 1, ...
  std::vector<std::uint32_t> by_rail;
  by_rail.reserve(endpoints.size());
  for (int r = 0; r < spec.rails; ++r) {
    for (int n = 0; n < spec.nodes; ++n) by_rail.push_back(endpoints[static_cast<std::size_t>(n * spec.rails + r)]);
  }
  const std::size_t first_switch = t.switch_count();
  build_leaf_spine(t, as_leaf_spine(spec), by_rail, prefix, {"rail", "nic-rail", "rail-spine"});
  if (spec.sharp_bandwidth.bits_per_second > 0) {
    for (std::size_t s = first_switch; s < t.switch_count(); ++s) {
      if (t.node(t.switch_node(static_cast<std::uint32_t>(s))).role == "rail") t.set_reduce_rate(t.switch_node(static_cast<std::uint32_t>(s)), spec.sharp_bandwidth);
    }
  }
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
