#include "app/collective_tuner.h"

#include <algorithm>
#include <map>
#include <variant>

namespace fabricsim {

namespace {
double GBps(Bandwidth b) { return static_cast<double>(b.bits_per_second) / 8e9; }
double us_of(Time t) { return static_cast<double>(t) * 1e-6; }
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
    f.hop_latency_us = us_of(s.latency);
    f.intra_step_us = 2 * us_of(s.latency);
  } else if (topology.kind == TopologyConfig::Kind::kCluster) {
    const ClusterSpec& c = topology.cluster;
    f.gpus_per_node = std::max(1, std::min(ranks, c.node.gpus));
    f.nvlink_GBps = GBps(c.node.gpu_bandwidth());
    f.nvls_GBps = GBps(c.node.nvls_bandwidth);
    f.nvls_latency_us = us_of(c.node.nvls_latency);
    f.node_nic_GBps = GBps(c.nic_link.bandwidth) * c.nics_per_node;
    f.hop_latency_us = us_of(c.nic_link.latency);
    f.intra_step_us = 2 * us_of(c.node.latency);
    // A step between nodes crosses PCIe twice through relaying NICs; through RDMA NICs
    // four times (the work request, the NIC's read and its answer, the DMA write).
    f.inter_step_us = (c.rdma_nics ? 4 : 2) * us_of(c.pcie.latency) + 2 * us_of(c.nic_link.latency);
    f.nics_per_node = c.nics_per_node;
    if (const auto* rail = std::get_if<RailOptimizedSpec>(&c.fabric)) f.sharp = rail->sharp_bandwidth.bits_per_second > 0;
  } else {
    // Host fabrics: one endpoint per "node"; the ring is the only candidate.
    f.gpus_per_node = 1;
  }
  f.nodes = std::max(1, (ranks + f.gpus_per_node - 1) / f.gpus_per_node);
  return f;
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
  f.gpus_per_node = even ? first : static_cast<int>(hosts.size());
  if (!even) f.nodes = 1;  // uneven: no node structure the NVLS algorithms can use
  // The member GPUs' NICs (one per GPU up to the node's count).
  f.node_nic_GBps = GBps(c.nic_link.bandwidth) * std::min(first, c.nics_per_node);
  return f;
}

TunerChoice choose_algorithm(CollectiveOp op, std::int64_t bytes, const TunerFacts& f, const std::string& algorithm,
                             const std::string& protocol) {
  TunerChoice choice;
  const double size = static_cast<double>(bytes);
  const int n = std::max(2, f.ranks);
  const bool reducing = op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllGather;
  const bool protocols = protocol != "none";
  std::vector<NcclProtocol> ring_protocols{NcclProtocol::kNone};
  if (protocol == "auto") ring_protocols = {NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple};
  if (protocols && protocol != "auto") ring_protocols = {protocol_from_name(protocol).value_or(NcclProtocol::kSimple)};
  const NcclProtocol nvls_protocol = protocols ? NcclProtocol::kSimple : NcclProtocol::kNone;
  const auto wanted = [&](const char* name) { return algorithm == "auto" || algorithm == name; };
  // Ring: busbw is the slowest hop of a channel times the channels, i.e. a GPU's NVLink
  // inside a node, and across nodes the node's NICs; 2(n-1) steps (AllReduce) of two hops.
  if (wanted("ring") && op != CollectiveOp::kAllToAll && op != CollectiveOp::kSendRecv) {
    double busbw = f.nvlink_GBps > 0 ? f.nvlink_GBps : 0;
    if (f.nodes > 1 && f.node_nic_GBps > 0) busbw = busbw > 0 ? std::min(busbw, f.node_nic_GBps) : f.node_nic_GBps;
    if (busbw > 0) {
      const int steps = op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
      for (NcclProtocol p : ring_protocols) {
        const double bus = nccl_ring_busbw_GBps(p, busbw, op, f.nodes, f.channels);
        const double latency = p == NcclProtocol::kNone ? steps * 2 * f.hop_latency_us
                                                        : nccl_ring_latency_us(p, op, n, f.nodes, f.nvlink_GBps > 0);
        choice.estimates.push_back({"ring", p, latency + size / (bus / busbw_factor(op, n) * 1e3)});
      }
    }
  }
  // NCCL's tree (AllReduce across whole nodes): costed with NCCL's own figures, so only
  // when protocols are costed too (the network-only estimates have no tree figures).
  if (wanted("tree") && protocols && op == CollectiveOp::kAllReduce && f.nodes > 1 && f.gpus_per_node >= 1 &&
      f.ranks % f.gpus_per_node == 0 && (f.nvlink_GBps > 0 || f.node_nic_GBps > 0)) {
    const double nic = f.node_nic_GBps > 0 ? f.node_nic_GBps : f.nvlink_GBps;
    const double base = f.nodes <= 2 && f.nvlink_GBps > 0 ? f.nvlink_GBps : std::min(f.nvlink_GBps > 0 ? f.nvlink_GBps : nic, nic);
    for (NcclProtocol p : ring_protocols) {
      const double algbw = nccl_tree_busbw_GBps(p, base, f.nodes, f.channels) * 0.5 * nccl_tree_correction(p, bytes);
      const double latency = nccl_tree_latency_us(p, f.ranks, f.nodes, f.nvlink_GBps > 0);
      choice.estimates.push_back({"tree", p, latency + size / (algbw * 1e3)});
    }
  }
  // CollNet Direct (AllReduce, Simple only, where the rail switches reduce): NCCL's
  // figures: bus bandwidth NVLink's over the GPU-per-NIC factor (ppn / heads, softened
  // halfway to 1), 85% on Hopper-class parts; half of it as algorithm bandwidth; latency
  // 2 x (one NVLink hop of 8 us + 0.5 us per further GPU of the node) + the network's 10.7.
  if (wanted("collnet") && protocols && op == CollectiveOp::kAllReduce && f.sharp && f.nodes > 1 && f.nvlink_GBps > 0 &&
      f.ranks % f.gpus_per_node == 0 && f.nics_per_node > 0 && (protocol == "auto" || protocol == "simple")) {
    const double ppn = f.gpus_per_node;
    double factor = ppn / f.nics_per_node;
    factor -= (factor - 1) / 2;
    const double algbw = f.nvlink_GBps / factor * 0.85 * 0.5;
    choice.estimates.push_back({"collnet", NcclProtocol::kSimple, nccl_collnet_latency_us(f.gpus_per_node) + size / (algbw * 1e3)});
  }
  if (wanted("nvls") && reducing && f.nvls_GBps > 0 && f.nodes == 1) {
    choice.estimates.push_back({"nvls", nvls_protocol, f.nvls_latency_us + size / (f.nvls_GBps * 1e3)});
  }
  if (wanted("nvls_tree") && op == CollectiveOp::kAllReduce && f.nvls_GBps > 0 && f.nodes > 1 && f.node_nic_GBps > 0 &&
      f.gpus_per_node >= 2 && f.ranks % f.gpus_per_node == 0) {
    // The switches sum and multicast the whole buffer; each node's NICs carry it once
    // each way (each GPU its share on its rail), over a tree of depth log2(nodes).
    int depth = 0;
    for (int m = 1; m < f.nodes; m *= 2) ++depth;
    const double algbw = std::min(f.nvls_GBps, f.node_nic_GBps);
    choice.estimates.push_back({"nvls_tree", nvls_protocol, f.nvls_latency_us + 2 * depth * 3 * f.hop_latency_us + size / (algbw * 1e3)});
  }
  if (choice.estimates.empty()) {
    // A fixed algorithm the model does not cost, or nothing applies: as asked, no protocol.
    choice.algorithm = algorithm != "auto" ? algorithm
                       : op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv ? "direct"
                                                                                         : "ring";
    return choice;
  }
  const auto best = std::min_element(choice.estimates.begin(), choice.estimates.end(),
                                     [](const TunerEstimate& a, const TunerEstimate& b) { return a.time_us < b.time_us; });
  choice.algorithm = best->algorithm;
  choice.protocol = best->protocol;
  return choice;
}

}  // namespace fabricsim
