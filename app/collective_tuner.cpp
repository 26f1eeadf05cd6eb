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
    f.compute_capability = s.compute_capability;
  } else if (topology.kind == TopologyConfig::Kind::kCluster) {
    const ClusterSpec& c = topology.cluster;
    f.gpus_per_node = std::max(1, std::min(ranks, c.node.gpus));
    f.nvlink_GBps = GBps(c.node.gpu_bandwidth());
    f.nvls_GBps = GBps(c.node.nvls_bandwidth);
    f.nvls_latency_us = us_of(c.node.nvls_latency);
    f.nic_GBps = GBps(c.nic_link.bandwidth);
    f.node_nic_GBps = f.nic_GBps * c.nics_per_node;
    f.compute_capability = c.node.compute_capability;
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
  f.nics_per_node = std::min(first, c.nics_per_node);
  return f;
}

NcclSystem nccl_system(const TunerFacts& f) {
  NcclSystem s;
  s.ranks = f.ranks;
  s.nodes = f.nodes;
  s.compute_capability = f.compute_capability;
  s.cpu_amd = f.cpu_amd;
  s.net_overhead_us = f.cpu_amd ? 2.0 : 1.0;
  s.nvlink = f.nvlink_GBps > 0;
  const int cc = f.compute_capability;
  const NcclGraph ring = nccl_ring_graph(cc, f.nvlink_GBps, f.nic_GBps, f.nics_per_node, f.nodes);
  const auto at = [&](NcclAlgo a) -> NcclGraph& { return s.graphs[static_cast<std::size_t>(a)]; };
  at(NcclAlgo::kRing) = ring;
  const bool whole_nodes = f.nodes > 1 && f.gpus_per_node >= 1 && f.ranks % f.gpus_per_node == 0;
  if (whole_nodes) at(NcclAlgo::kTree) = nccl_tree_graph(cc, f.nvlink_GBps, f.nic_GBps, f.nics_per_node, f.nodes);
  if (f.sharp && whole_nodes && f.nvlink_GBps > 0 && f.nics_per_node > 0) {
    // CollNet Direct: a channel per NIC (its heads), each at what that NIC carries.
    NcclGraph g;
    g.channels = f.nics_per_node;
    g.bw_intra = g.bw_inter = std::min(f.nic_GBps, f.nvlink_GBps / f.nics_per_node);
    at(NcclAlgo::kCollNetDirect) = g;
  }
  if (f.nvls_GBps > 0 && f.nodes == 1) at(NcclAlgo::kNvls) = nccl_nvls_graph(cc, f.nvlink_GBps, 0, 0, 1);
  if (f.nvls_GBps > 0 && whole_nodes && f.gpus_per_node >= 2 && f.node_nic_GBps > 0) {
    at(NcclAlgo::kNvlsTree) = nccl_nvls_graph(cc, f.nvlink_GBps, f.nic_GBps, f.nics_per_node, f.nodes);
  }
  s.comm_channels = ring.channels;
  return s;
}

namespace {

// NCCL's choice: the (algorithm, protocol) of least predicted time by its own model.
void choose_by_nccl_model(TunerChoice& choice, CollectiveOp op, std::int64_t bytes, const TunerFacts& f,
                          const std::string& algorithm, const std::string& protocol) {
  const std::optional<NcclRules> rules = nccl_rules(f.nccl_version);
  if (!rules || (f.nvlink_GBps <= 0 && f.node_nic_GBps <= 0)) return;
  const NcclSystem system = nccl_system(f);
  const NcclCostModel model(*rules, system);
  std::vector<NcclProtocol> protocols{NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple};
  if (protocol != "auto") protocols = {protocol_from_name(protocol).value_or(NcclProtocol::kSimple)};
  double best = -1;
  for (int i = 0; i < kNcclAlgos; ++i) {
    const auto a = static_cast<NcclAlgo>(i);
    if (algorithm != "auto" && algorithm != nccl_algo_key(a)) continue;
    for (NcclProtocol p : protocols) {
      const double t = model.time_us(op, a, p, bytes);
      if (t < 0) continue;
      choice.estimates.push_back({nccl_algo_key(a), p, t});
      if (best < 0 || t < best) {
        best = t;
        choice.algorithm = nccl_algo_key(a);
        choice.protocol = p;
        choice.nccl_time_us = t;
        choice.nccl_latency_us = model.latency_us(op, a, p, bytes);
        choice.nccl_channels = system.graphs[static_cast<std::size_t>(a)].channels;
        const double simple = model.cost(op, a, NcclProtocol::kSimple).algbw_GBps;
        const double mine = model.cost(op, a, p).algbw_GBps;
        choice.wire_factor = std::max(protocol_wire_factor(p), simple > 0 && mine > 0 ? simple / mine : 1.0);
      }
    }
  }
}

// The ideal network's estimate (`protocol: none`): latency + size / bandwidth of what the
// fabric gives each candidate.
void choose_by_network(TunerChoice& choice, CollectiveOp op, std::int64_t bytes, const TunerFacts& f, const std::string& algorithm) {
  const double size = static_cast<double>(bytes);
  const int n = std::max(2, f.ranks);
  const bool reducing = op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllGather;
  const auto wanted = [&](const char* name) { return algorithm == "auto" || algorithm == name; };
  // Ring: busbw is the slowest hop of a channel times the channels, i.e. a GPU's NVLink
  // inside a node, and across nodes the node's NICs; 2(n-1) steps (AllReduce) of two hops.
  if (wanted("ring") && op != CollectiveOp::kAllToAll && op != CollectiveOp::kSendRecv) {
    double busbw = f.nvlink_GBps > 0 ? f.nvlink_GBps : 0;
    if (f.nodes > 1 && f.node_nic_GBps > 0) busbw = busbw > 0 ? std::min(busbw, f.node_nic_GBps) : f.node_nic_GBps;
    if (busbw > 0) {
      const int steps = op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
      choice.estimates.push_back({"ring", NcclProtocol::kNone, steps * 2 * f.hop_latency_us + size / (busbw / busbw_factor(op, n) * 1e3)});
    }
  }
  if (wanted("nvls") && reducing && f.nvls_GBps > 0 && f.nodes == 1) {
    choice.estimates.push_back({"nvls", NcclProtocol::kNone, f.nvls_latency_us + size / (f.nvls_GBps * 1e3)});
  }
  if (wanted("nvls_tree") && op == CollectiveOp::kAllReduce && f.nvls_GBps > 0 && f.nodes > 1 && f.node_nic_GBps > 0 &&
      f.gpus_per_node >= 2 && f.ranks % f.gpus_per_node == 0) {
    // The switches sum and multicast the whole buffer; each node's NICs carry it once
    // each way (each GPU its share on its rail), over a tree of depth log2(nodes).
    int depth = 0;
    for (int m = 1; m < f.nodes; m *= 2) ++depth;
    const double algbw = std::min(f.nvls_GBps, f.node_nic_GBps);
    choice.estimates.push_back({"nvls_tree", NcclProtocol::kNone, f.nvls_latency_us + 2 * depth * 3 * f.hop_latency_us + size / (algbw * 1e3)});
  }
  if (choice.estimates.empty()) return;
  const auto best = std::min_element(choice.estimates.begin(), choice.estimates.end(),
                                     [](const TunerEstimate& a, const TunerEstimate& b) { return a.time_us < b.time_us; });
  choice.algorithm = best->algorithm;
  choice.protocol = best->protocol;
}

}  // namespace

TunerChoice choose_algorithm(CollectiveOp op, std::int64_t bytes, const TunerFacts& f, const std::string& algorithm,
                             const std::string& protocol) {
  TunerChoice choice;
  if (protocol != "none") choose_by_nccl_model(choice, op, bytes, f, algorithm, protocol);
  else choose_by_network(choice, op, bytes, f, algorithm);
  if (choice.estimates.empty()) {
    // A fixed algorithm the model does not cost, or nothing applies: as asked, no protocol.
    choice.algorithm = algorithm != "auto" ? algorithm
                       : op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv ? "direct"
                                                                                         : "ring";
  }
  return choice;
}

}  // namespace fabricsim
