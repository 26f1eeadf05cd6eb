#include "topologies/leaf_spine.h"

#include <cmath>
#include <stdexcept>

namespace fabricsim {

double leaf_spine_oversubscription(const LeafSpineSpec& s) {
  const double down = static_cast<double>(s.hosts_per_leaf) * static_cast<double>(s.host_link.bandwidth.bits_per_second);
  const double up = static_cast<double>(s.spines) * s.links_per_pair * static_cast<double>(s.fabric_link.bandwidth.bits_per_second);
  return down / up;
}

Bandwidth fabric_bandwidth_for(const LeafSpineSpec& s, double ratio) {
  const double down = static_cast<double>(s.hosts_per_leaf) * static_cast<double>(s.host_link.bandwidth.bits_per_second);
  return Bandwidth{static_cast<std::int64_t>(std::llround(down / (ratio * s.spines * s.links_per_pair)))};
}

void build_leaf_spine(Topology& t, const LeafSpineSpec& spec, const std::vector<std::uint32_t>& endpoints,
                      const std::string& prefix, const LeafSpineNames& names) {
  if (endpoints.size() > static_cast<std::size_t>(spec.leaves) * static_cast<std::size_t>(spec.hosts_per_leaf)) {
    throw std::invalid_argument("more endpoints than leaves * hosts_per_leaf");
  }
  std::vector<std::uint32_t> leaves, spines;
  for (int l = 0; l < spec.leaves; ++l) leaves.push_back(t.add_switch(prefix + names.leaf + std::to_string(l), names.leaf));
  for (int s = 0; s < spec.spines; ++s) spines.push_back(t.add_switch(prefix + "spine" + std::to_string(s), "spine"));
  for (std::size_t e = 0; e < endpoints.size(); ++e) {
    t.connect(endpoints[e], leaves[e / static_cast<std::size_t>(spec.hosts_per_leaf)], spec.host_link, names.host_tier);
  }
  for (std::uint32_t leaf : leaves) {
    for (std::uint32_t spine : spines) {
      for (int k = 0; k < spec.links_per_pair; ++k) {
        t.connect(leaf, spine, spec.fabric_link, names.fabric_tier);
      }
    }
  }
}

Topology leaf_spine_topology(const LeafSpineSpec& spec) {
  Topology t;
  const auto hosts = add_hosts(t, spec.leaves * spec.hosts_per_leaf, "h");
  build_leaf_spine(t, spec, hosts);
  return t;
}

}  // namespace fabricsim
