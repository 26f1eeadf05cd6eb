#include "topologies/fat_tree.h"

#include <stdexcept>

namespace fabricsim {

void build_fat_tree(Topology& t, const FatTreeSpec& spec, const std::vector<std::uint32_t>& endpoints,
                    const std::string& prefix) {
  const int k = spec.k;
  if (k < 2 || k % 2 != 0) throw std::invalid_argument("fat-tree k must be even and at least 2");
  if (endpoints.size() > static_cast<std::size_t>(fat_tree_hosts(k))) throw std::invalid_argument("more endpoints than k^3/4");
  const int half = k / 2;
  std::vector<std::uint32_t> core;
  for (int c = 0; c < half * half; ++c) core.push_back(t.add_switch(prefix + "core" + std::to_string(c), "core"));
  std::size_t next_endpoint = 0;
  for (int p = 0; p < k; ++p) {
    std::vector<std::uint32_t> edge, agg;
    const std::string pod = prefix + "pod" + std::to_string(p) + ".";
    for (int i = 0; i < half; ++i) edge.push_back(t.add_switch(pod + "edge" + std::to_string(i), "edge"));
    for (int i = 0; i < half; ++i) agg.push_back(t.add_switch(pod + "agg" + std::to_string(i), "aggregation"));
    for (int e = 0; e < half; ++e) {
      for (int i = 0; i < half && next_endpoint < endpoints.size(); ++i) {
        t.connect(endpoints[next_endpoint++], edge[e], spec.host_link, "host");
      }
      for (int a = 0; a < half; ++a) t.connect(edge[e], agg[a], spec.edge_link, "edge-agg");
    }
    for (int a = 0; a < half; ++a) {
      for (int c = 0; c < half; ++c) {
        t.connect(agg[a], core[a * half + c], spec.core_link, "agg-core");
      }
    }
  }
}

Topology fat_tree_topology(const FatTreeSpec& spec) {
  Topology t;
  const auto hosts = add_hosts(t, fat_tree_hosts(spec.k), "h");
  build_fat_tree(t, spec, hosts);
  return t;
}

}  // namespace fabricsim
