#include "app/workload/tuner_facts.h"

#include <algorithm>
#include <map>
#include <variant>

namespace fabricsim {

namespace {
double GBps(Bandwidth b) { return static_cast<double>(b.bits_per_second) / 8e9; }
double us_of(Time t) { return static_cast<double>(t) * 1e-6; }

NcclP2pKernel p2p_kernel(const P2pKernelSpec& s) {
  return {s.channel_GBps, s.ll_channel_GBps, us_of(s.batch_latency), us_of(s.ll_batch_latency), s.drain_GBps, us_of(s.launch_latency)};
}
}  // namespace

TunerFacts tuner_facts(const TopologyConfig& topology, int ranks) {
  TunerFacts f;
  f.ranks = ranks;
  if (topology.kind == TopologyConfig::Kind::kNvSwitch) {
    const NvSwitchSpec& s = topology.nvswitch;
    f.gpus_per_node = std::max(1, std::min(ranks, s.gpus));
    f.nvlink_GBps = GBps(s.gpu_bandwidth());
    f.nvls_GBps = GBps(s.nvls_bandwidth);
    f.nvls_latency_us = us_of(s.nvls_latency);
    f.nvls_fill_rounds = s.nvls_fill_rounds;
    f.nvls_head_cost_us = us_of(s.nvls_head_cost);
    f.nvlinks_per_gpu = s.links_per_gpu();
    f.p2p = p2p_kernel(s.p2p);
    f.hop_latency_us = us_of(s.latency);
    f.intra_step_us = 2 * us_of(s.latency);
    f.compute_capability = s.compute_capability;
  } else if (topology.kind == TopologyConfig::Kind::kCluster) {
    const ClusterSpec& c = topology.cluster;
    f.gpus_per_node = std::max(1, std::min(ranks, c.node.gpus));
    f.nvlink_GBps = GBps(c.node.gpu_bandwidth());
    f.nvls_GBps = GBps(c.node.nvls_bandwidth);
    f.nvls_latency_us = us_of(c.node.nvls_latency);
    f.nvls_fill_rounds = c.node.nvls_fill_rounds;
    f.nvls_head_cost_us = us_of(c.node.nvls_head_cost);
    f.nvlinks_per_gpu = c.node.links_per_gpu();
    f.p2p = p2p_kernel(c.node.p2p);
    // NCCL sees each RDMA port as a NIC of its own.
    f.nic_GBps = GBps(c.nic_link.bandwidth) / c.nic_ports;
    f.node_nic_GBps = GBps(c.nic_link.bandwidth) * c.nics_per_node;
    f.compute_capability = c.node.compute_capability;
    f.hop_latency_us = us_of(c.nic_link.latency);
    f.intra_step_us = 2 * us_of(c.node.latency);
    // A step between nodes crosses PCIe twice through relaying NICs; through RDMA NICs
    // four times (the work request, the NIC's read and its answer, the DMA write).
    f.inter_step_us = (c.rdma_nics ? 4 : 2) * us_of(c.pcie.latency) + 2 * us_of(c.nic_link.latency);
    f.nics_per_node = c.nics_per_node * c.nic_ports;
    if (const auto* rail = std::get_if<RailOptimizedSpec>(&c.fabric)) f.sharp = rail->sharp_bandwidth.bits_per_second > 0;
  } else {
    // Host fabrics: one endpoint per "node"; the ring is the only candidate.
    f.gpus_per_node = 1;
  }
  f.nodes = std::max(1, (ranks + f.gpus_per_node - 1) / f.gpus_per_node);
  return f;
}

void apply_nccl_settings(TunerFacts& f, const NetworkConfig& n) {
  f.nccl_version = n.nccl_version;
  f.cpu = n.cpu;
  f.min_ctas = n.nccl_min_ctas;
  f.max_ctas = n.nccl_max_ctas;
  f.qps_per_connection = n.nccl_qps_per_connection;
  f.buffsize = n.nccl_buffsize;
}

TunerFacts tuner_facts_for_group(const TopologyConfig& topology, const std::vector<std::uint32_t>& hosts) {
  TunerFacts f = tuner_facts(topology, static_cast<int>(hosts.size()));
  if (topology.kind != TopologyConfig::Kind::kCluster) return f;
  const ClusterSpec& c = topology.cluster;
  std::map<std::uint32_t, int> per_node;
  for (std::uint32_t h : hosts) ++per_node[h / static_cast<std::uint32_t>(std::max(1, c.node.gpus))];
  f.nodes = static_cast<int>(per_node.size());
  const int first = per_node.begin()->second;
  const bool even = std::all_of(per_node.begin(), per_node.end(), [&](const auto& e) { return e.second == first; });
  // Uneven: no whole nodes, so neither the tree nor the NVLS algorithms (nor NVLS over
  // one node, which the members do not share); the ring crosses the nodes.
  f.gpus_per_node = even ? first : 0;
  // The member GPUs' NICs (one per GPU up to the node's count).
  f.node_nic_GBps = GBps(c.nic_link.bandwidth) * std::min(first, c.nics_per_node);
  f.nics_per_node = std::min(first, c.nics_per_node) * c.nic_ports;
  return f;
}

bool runs_nccl_model(const std::string& protocol, const TunerFacts& f) {
  return protocol != "none" && (f.nvlink_GBps > 0 || f.node_nic_GBps > 0);
}

std::string model_description(const std::string& protocol, const TunerFacts& f) {
  if (protocol == "none") return "ideal network (protocol none: no NCCL costs)";
  if (!runs_nccl_model(protocol, f)) return "ideal network (a host fabric: no GPUs for NCCL's model)";
  std::string d = "NCCL " + f.nccl_version + " tuning rules, protocol " + protocol;
  // The environment NCCL was given, where it departs from NCCL's defaults.
  if (f.min_ctas > 0) d += ", NCCL_MIN_CTAS=" + std::to_string(f.min_ctas);
  if (f.max_ctas > 0) d += ", NCCL_MAX_CTAS=" + std::to_string(f.max_ctas);
  if (f.qps_per_connection > 1) d += ", NCCL_IB_QPS_PER_CONNECTION=" + std::to_string(f.qps_per_connection);
  if (f.buffsize > 0) d += ", NCCL_BUFFSIZE=" + std::to_string(f.buffsize);
  return d;
}

}  // namespace fabricsim
