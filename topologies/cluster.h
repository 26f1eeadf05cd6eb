#pragma once
// A whole cluster: `nodes` copies of a node (an NVSwitch domain of GPUs, `nics_per_node`
// NICs, each GPU on the PCIe link to NIC g * nics / gpus), joined by a scale-out fabric
// whose endpoints are the NICs. GPUs are the endpoints workloads address: between GPUs
// of one node traffic takes NVLink, between nodes PCIe, NIC and fabric. A NIC forwards
// between its PCIe and network sides (a two-sided store-and-forward element).
// Names: n<node>.gpu<g>, n<node>.nvsw<c>, n<node>.nic<i>; fabric switches as its builder names them.
#include <variant>

#include "topologies/fat_tree.h"
#include "topologies/leaf_spine.h"
#include "topologies/nvswitch.h"
#include "topologies/rail_optimized.h"
#include "topologies/torus3d.h"

namespace fabricsim {

// The scale-out fabric; its endpoint links are the NIC links (their host/nic link is
// replaced by ClusterSpec::nic_link).
using ScaleOutSpec = std::variant<LeafSpineSpec, FatTreeSpec, RailOptimizedSpec, Torus3dSpec>;

struct ClusterSpec {
  int nodes = 2;
  NvSwitchSpec node;
  int nics_per_node = 8;
  // RDMA ports per NIC. Each port is a device of its own to NCCL (its own channels and
  // queue pairs) at the NIC's bandwidth over the ports; the NIC's link carries them all.
  int nic_ports = 1;
  LinkSpec pcie{Bandwidth::gBps(64), ns(500)};  // PCIe Gen5 x16, about 64 GB/s per direction
  LinkSpec nic_link{Bandwidth::gbps(400), ns(500)};
  ScaleOutSpec fabric = RailOptimizedSpec{};
  // `nic_model: rdma`: each NIC is its GPUs' RDMA endpoint (queue pairs, DMA over PCIe)
  // instead of a relay between PCIe and the wire (topologies/compile.h).
  bool rdma_nics = false;
};

// A GPU-to-NIC PCIe hop costs this much in routing, so that GPUs sharing a NIC still talk
// over NVLink rather than through the NIC.
inline constexpr std::uint32_t kPcieRoutingCost = 4;

Topology cluster_topology(const ClusterSpec& spec);

}  // namespace fabricsim
