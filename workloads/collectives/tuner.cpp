#include "workloads/collectives/tuner.h"

#include <algorithm>

#include "workloads/collectives/collective_algorithms.h"

namespace fabricsim {

NcclSystem nccl_system(const TunerFacts& f) {
  NcclSystem s;
  s.ranks = f.ranks;
  s.nodes = f.nodes;
  s.compute_capability = f.compute_capability;
  s.cpu = f.cpu;
  s.net_overhead_us = f.cpu == NcclCpu::kAmd ? 2.0 : 1.0;
  s.nvlink = f.nvlink_GBps > 0;
  const int cc = f.compute_capability;
  const std::optional<NcclRules> rules = nccl_rules(f.nccl_version);
  const bool search_2_18 = rules && rules->rules_2_18;
  const NcclBlackwellLists blackwell = rules ? rules->blackwell_lists : NcclBlackwellLists::kNone;
  const NcclGraph ring = nccl_ring_graph(cc, f.nvlink_GBps, f.nic_GBps, f.nics_per_node, f.nodes, blackwell);
  const auto at = [&](NcclAlgo a) -> NcclGraph& { return s.graphs[static_cast<std::size_t>(a)]; };
  at(NcclAlgo::kRing) = ring;
  const bool whole_nodes = f.nodes > 1 && f.gpus_per_node >= 1 && f.ranks % f.gpus_per_node == 0;
  if (whole_nodes) at(NcclAlgo::kTree) = nccl_tree_graph(cc, f.nvlink_GBps, f.nic_GBps, f.nics_per_node, f.nodes, blackwell);
  if (f.nodes == 1) at(NcclAlgo::kTree) = nccl_one_node_tree_graph(cc, f.nvlink_GBps, ring.channels, f.ranks, blackwell);
  if (f.sharp && whole_nodes && f.nvlink_GBps > 0 && f.nics_per_node > 0) {
    // CollNet Direct: a channel per NIC (its heads), each at what that NIC carries.
    NcclGraph g;
    g.channels = f.nics_per_node;
    g.bw_intra = g.bw_inter = std::min(f.nic_GBps, f.nvlink_GBps / f.nics_per_node);
    at(NcclAlgo::kCollNetDirect) = g;
  }
  const int domain_channels = rules ? rules->nvls_blackwell_domain_channels : 24;
  if (f.nvls_GBps > 0 && f.nodes == 1) {
    at(NcclAlgo::kNvls) = nccl_nvls_graph(cc, f.nvlink_GBps, 0, 0, 1, f.ranks, search_2_18, blackwell, domain_channels);
  }
  if (f.nvls_GBps > 0 && whole_nodes && f.gpus_per_node >= 2 && f.node_nic_GBps > 0) {
    at(NcclAlgo::kNvlsTree) = nccl_nvls_graph(cc, f.nvlink_GBps, f.nic_GBps, f.nics_per_node, f.nodes, f.gpus_per_node, search_2_18,
                                                 blackwell);
  }
  s.comm_channels = rules ? nccl_comm_channels(*rules, ring, cc, f.nodes, f.min_ctas, f.max_ctas) : ring.channels;
  return s;
}

NcclRunChannels nccl_run_channels(const TunerFacts& f, const NcclSystem& system, const NcclGraph& graph) {
  NcclRunChannels run{graph.channels, 1.0};
  if (f.min_ctas <= 0 && f.max_ctas <= 0) return run;
  const std::optional<NcclRules> rules = nccl_rules(f.nccl_version);
  if (!rules || graph.channels <= 0) return run;
  const int asked = system.comm_channels;
  const int by_default =
      nccl_comm_channels(*rules, system.graphs[static_cast<std::size_t>(NcclAlgo::kRing)], f.compute_capability, f.nodes);
  if (asked == by_default || asked <= 0) return run;
  run.channels = asked;
  run.speed_factor = static_cast<double>(graph.channels) / std::max(asked, by_default);
  return run;
}

std::int64_t nccl_simple_buffer_bytes(const TunerFacts& facts) {
  const std::optional<NcclRules> rules = nccl_rules(facts.nccl_version);
  if (!rules) return facts.buffsize > 0 ? facts.buffsize : kNcclDefaultSimpleBuffer;
  return nccl_simple_buffer_bytes(*rules, facts.cpu, facts.buffsize);
}

std::optional<NcclPipelineFacts> nccl_pipeline_facts(const TunerChoice& choice, CollectiveOp op, std::int64_t bytes,
                                                     int channels, const TunerFacts& facts) {
  const CollectiveAlgorithm* a = find_collective_algorithm(choice.algorithm);
  if (choice.protocol == NcclProtocol::kNone || a == nullptr || !a->nccl_pipeline) return std::nullopt;
  NcclPipelineFacts f;
  f.tree = a->nccl == NcclAlgo::kTree;
  f.op = op;
  f.bytes = bytes;
  f.channels = std::max(1, channels);
  f.ranks = facts.ranks;
  f.nodes = facts.nodes;
  f.simple_buffer_bytes = nccl_simple_buffer_bytes(facts);
  return f;
}

std::int64_t nccl_chunk_bytes(const TunerChoice& choice, CollectiveOp op, std::int64_t bytes, int channels, const TunerFacts& facts) {
  if (choice.protocol == NcclProtocol::kNone) return 0;
  if (const auto pipeline = nccl_pipeline_facts(choice, op, bytes, channels, facts)) {
    return nccl_piece_bytes(choice.protocol, *pipeline);
  }
  const CollectiveAlgorithm* a = find_collective_algorithm(choice.algorithm);
  if (a == nullptr || (a->nccl != NcclAlgo::kNvls && a->nccl != NcclAlgo::kNvlsTree)) return 0;
  // NVLS's heads: every GPU of the node; across nodes, those with a NIC.
  const int gpus = facts.nodes == 1 ? facts.ranks : std::max(1, facts.gpus_per_node);
  const int heads = facts.nodes > 1 && facts.nics_per_node > 0 ? std::min(gpus, facts.nics_per_node) : gpus;
  return nccl_nvls_chunk_bytes(a->nccl == NcclAlgo::kNvlsTree, bytes, channels, heads, facts.nodes);
}

namespace {

// NCCL's choice: the (algorithm, protocol) of least predicted time by its own model.
void choose_by_nccl_model(TunerChoice& choice, CollectiveOp op, std::int64_t bytes, const TunerFacts& f,
                          const std::string& algorithm, const std::string& protocol) {
  const std::optional<NcclRules> rules = nccl_rules(f.nccl_version);
  if (!rules || (f.nvlink_GBps <= 0 && f.node_nic_GBps <= 0)) return;
  const NcclSystem system = nccl_system(f);
  const NcclCostModel model(*rules, system);
  // Unasked, NCCL runs LL128 only on the GPUs its release enables it for; NCCL_PROTO forces it.
  std::vector<NcclProtocol> protocols{NcclProtocol::kLL, NcclProtocol::kSimple};
  if (rules->ll128_by_default(f.compute_capability)) protocols.insert(protocols.begin() + 1, NcclProtocol::kLL128);
  if (protocol != "auto") protocols = {protocol_from_name(protocol).value_or(NcclProtocol::kSimple)};
  double best = -1;
  for (int i = 0; i < kNcclAlgos; ++i) {
    const auto a = static_cast<NcclAlgo>(i);
    const CollectiveAlgorithm* ours = find_collective_algorithm(a);
    if (ours == nullptr || (algorithm != "auto" && algorithm != ours->name)) continue;
    for (NcclProtocol p : protocols) {
      const double t = model.time_us(op, a, p, bytes);
      if (t < 0) continue;
      choice.estimates.push_back({ours->name, p, t});
      if (best < 0 || t < best) {
        best = t;
        choice.algorithm = ours->name;
        choice.protocol = p;
        choice.nccl_time_us = t;
        choice.nccl_latency_us = model.latency_us(op, a, p, bytes);
        const NcclGraph& graph = system.graphs[static_cast<std::size_t>(a)];
        const NcclRunChannels run = ours->nccl_pipeline ? nccl_run_channels(f, system, graph) : NcclRunChannels{graph.channels, 1.0};
        choice.nccl_channels = graph.run_channels > 0 ? graph.run_channels : run.channels;
        choice.nccl_steps = model.step_latency(a, p);
        choice.nccl_channel_GBps = model.cost(op, a, p).channel_GBps * run.speed_factor;
        const double simple = model.cost(op, a, NcclProtocol::kSimple).algbw_GBps;
        const double mine = model.cost(op, a, p).algbw_GBps;
        choice.wire_factor = std::max(protocol_wire_factor(p), simple > 0 && mine > 0 ? simple / mine : 1.0);
      }
    }
  }
}

// The ideal network's estimate (`protocol: none`): latency + size / bandwidth of what the
// fabric gives each candidate (each algorithm's own estimate, in the registry's order).
void choose_by_network(TunerChoice& choice, CollectiveOp op, std::int64_t bytes, const TunerFacts& f, const std::string& algorithm) {
  for (const CollectiveAlgorithm* a : collective_algorithms()) {
    if (a->ideal_estimate_us == nullptr || (algorithm != "auto" && algorithm != a->name)) continue;
    const double t = a->ideal_estimate_us(op, static_cast<double>(bytes), f);
    if (t >= 0) choice.estimates.push_back({a->name, NcclProtocol::kNone, t});
  }
  if (choice.estimates.empty()) return;
  const auto best = std::min_element(choice.estimates.begin(), choice.estimates.end(),
                                     [](const TunerEstimate& a, const TunerEstimate& b) { return a.time_us < b.time_us; });
  choice.algorithm = best->algorithm;
  choice.protocol = best->protocol;
}

// AllToAll as NCCL runs it: one send and one receive per peer through its p2p kernel
// (workloads/collectives/nccl_p2p.h). NCCL's tuner has no model for it: no NCCL time.
void choose_p2p(TunerChoice& choice, std::int64_t bytes, const TunerFacts& f, const std::string& protocol) {
  const std::optional<NcclRules> rules = nccl_rules(f.nccl_version);
  if (!rules || f.p2p.channel_GBps <= 0 || f.ranks < 2) return;
  NcclP2pFacts p;
  p.ranks = f.ranks;
  p.nodes = f.nodes;
  p.bytes_per_peer = bytes / f.ranks;
  // The communicator's channels (nccl_comm_channels).
  p.comm_channels = std::max(1, nccl_system(f).comm_channels);
  p.nvlinks_per_gpu = f.nvlinks_per_gpu;
  p.nics_per_node = std::max(1, f.nics_per_node);
  p.gpus_per_node = std::max(1, f.gpus_per_node);
  p.nccl_minor = nccl_minor_version(f.nccl_version);
  p.simple_buffer_bytes = nccl_simple_buffer_bytes(f);
  // A protocol asked for by name (NCCL's p2p has no LL128: Simple for it).
  if (protocol == "ll") p.protocol = NcclProtocol::kLL;
  else if (protocol == "simple" || protocol == "ll128") p.protocol = NcclProtocol::kSimple;
  const NcclP2pPlan plan = nccl_p2p_plan(p);
  choice.algorithm = "direct";
  choice.protocol = plan.protocol;
  choice.nccl_channels = plan.parts;
  choice.nccl_latency_us = f.p2p.launch_us;
  const double rate = plan.protocol == NcclProtocol::kLL ? f.p2p.ll_channel_GBps : f.p2p.channel_GBps;
  choice.nccl_channel_GBps = rate / plan.most_sends_per_batch;
  choice.wire_factor = protocol_wire_factor(plan.protocol);
  choice.estimates.push_back({"direct", plan.protocol, nccl_p2p_kernel_time_us(plan, f.p2p)});
  choice.p2p = plan;
}

}  // namespace

TunerChoice choose_algorithm(CollectiveOp op, std::int64_t bytes, const TunerFacts& f, const std::string& algorithm,
                             const std::string& protocol) {
  TunerChoice choice;
  if (protocol != "none" && op == CollectiveOp::kAllToAll && (algorithm == "auto" || algorithm == "direct")) {
    choose_p2p(choice, bytes, f, protocol);
  } else if (protocol != "none") choose_by_nccl_model(choice, op, bytes, f, algorithm, protocol);
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
