#include "topologies/leaf_spine.h"

#include <string>
#include <vector>

namespace fabricsim {
Topology build_leaf_spine(const LeafSpineSpec& spec) {
  Topology t;
  std::vector<std::uint32_t> leaves, spines;
  for (int h = 0; h < spec.leaves * spec.hosts_per_leaf; ++h) t.add_host("h" + std::to_string(h));
  for (int l = 0; l < spec.leaves; ++l) leaves.push_back(t.add_switch("leaf" + std::to_string(l)));
  for (int s = 0; s < spec.spines; ++s) spines.push_back(t.add_switch("spine" + std::to_string(s)));
  for (int l = 0; l < spec.leaves; ++l) {
    for (int h = 0; h < spec.hosts_per_leaf; ++h) {
      t.connect(t.host_node(static_cast<std::uint32_t>(l * spec.hosts_per_leaf + h)), leaves[l],
                spec.host_link.bandwidth, spec.host_link.latency, "host");
    }
  }
  for (int l = 0; l < spec.leaves; ++l) {
    for (int s = 0; s < spec.spines; ++s) {
      for (int k = 0; k < spec.links_per_pair; ++k) {
        t.connect(leaves[l], spines[s], spec.fabric_link.bandwidth, spec.fabric_link.latency, "fabric");
      }
    }
  }
  return t;
}

}  // namespace fabricsim
