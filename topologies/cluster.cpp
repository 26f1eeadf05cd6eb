#include "topologies/cluster.h"

#include <stdexcept>

namespace fabricsim {

Topology cluster_topology(const ClusterSpec& spec) {
  if (spec.nics_per_node < 1 || spec.nics_per_node > spec.node.gpus) {
    throw std::invalid_argument("nics_per_node must be from 1 to the GPUs per node");
  }
  Topology t;
  std::vector<std::uint32_t> nics;
  for (int n = 0; n < spec.nodes; ++n) {
    const std::string prefix = "n" + std::to_string(n) + ".";
    const auto gpus = add_hosts(t, spec.node.gpus, prefix + "gpu", "gpu");
    build_nvswitch(t, spec.node, gpus, prefix);
    std::vector<std::uint32_t> node_nics;
    for (int i = 0; i < spec.nics_per_node; ++i) node_nics.push_back(t.add_switch(prefix + "nic" + std::to_string(i), "nic"));
    for (int g = 0; g < spec.node.gpus; ++g) {
      const std::uint32_t nic = node_nics[static_cast<std::size_t>(g * spec.nics_per_node / spec.node.gpus)];
      t.connect(gpus[static_cast<std::size_t>(g)], nic, LinkSpec{spec.pcie.bandwidth, spec.pcie.latency, FlowControl::kCredit, spec.pcie.credit_bytes}, "pcie",
                kPcieRoutingCost);
    }
    nics.insert(nics.end(), node_nics.begin(), node_nics.end());
  }
  std::visit(
      [&](auto fabric) {
        using Spec = decltype(fabric);
        if constexpr (std::is_same_v<Spec, LeafSpineSpec>) {
          fabric.host_link = spec.nic_link;
          build_leaf_spine(t, fabric, nics);
        } else if constexpr (std::is_same_v<Spec, FatTreeSpec>) {
          fabric.host_link = spec.nic_link;
          build_fat_tree(t, fabric, nics);
        } else if constexpr (std::is_same_v<Spec, RailOptimizedSpec>) {
          fabric.nodes = spec.nodes;
          fabric.rails = spec.nics_per_node;
          fabric.nic_link = spec.nic_link;
          build_rail_optimized(t, fabric, nics);
        } else {
          fabric.host_link = spec.nic_link;
          build_torus3d(t, fabric, nics);
        }
      },
      spec.fabric);
  return t;
}

}  // namespace fabricsim
