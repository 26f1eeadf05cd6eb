// A collective swept over sizes, as nccl-tests runs it (app/workload/collective_sweep.h).
#include "app/workload/collective_sweep.h"
#include "app/workload/tuner_facts.h"
#include "app/workload/workload_kind.h"
#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/nccl_protocol.h"
#include "workloads/collectives/nvls.h"
#include "workloads/collectives/tuner.h"

#include <algorithm>

namespace fabricsim {

WorkloadStart make_collective_workload(const WorkloadSetup& s) {
  WorkloadStart start;
  start.driver = std::make_unique<CollectiveSweep>(s.network, s.topology, s.config, s.placement);
  return start;
}

WorkloadNeeds collective_needs(const ScenarioConfig& config, const Topology& t) {
  WorkloadNeeds needs;
  const WorkloadConfig& w = config.workload;
  const std::uint64_t hosts = t.host_count();
  // The largest size's first step: every rank sends on every channel at once.
  const std::int64_t biggest = w.collective.sizes.empty() ? 0 : *std::max_element(w.collective.sizes.begin(), w.collective.sizes.end());
  const std::uint64_t ranks = w.collective.ranks > 0 ? static_cast<std::uint64_t>(w.collective.ranks) : hosts;
  // Unset channels are NCCL's: its ring graph's on this topology (1 for the ideal network).
  int nccl_channels = 1;
  const std::string& algo = w.collective.algorithm;
  if (w.collective.channels == 0 && w.collective.protocol != "none" && (algo == "ring" || algo == "tree" || algo == "auto")) {
    TunerFacts facts = tuner_facts(config.topology, static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(ranks, 1u << 30))));
    nccl_channels = std::max(1, nccl_system(facts).graphs[static_cast<std::size_t>(NcclAlgo::kRing)].channels);
  }
  const auto channels = static_cast<std::uint64_t>(w.collective.channels > 0 ? w.collective.channels : nccl_channels);
  needs.packets += ranks * channels * packets_of(config, biggest / 2);
  // The step programs, held by the check and by the executor, and the check's
  // send/receive matching (a queue per sender, receiver and channel): each
  // algorithm's own footprint (workloads/collectives/collective_algorithms.h).
  FootprintFacts facts;
  facts.ranks = ranks;
  facts.channels = channels;
  while ((1ull << facts.log2_ranks) < ranks) ++facts.log2_ranks;
  if (w.collective.protocol != "none" && (algo == "ring" || algo == "tree" || algo == "auto") && biggest > 0) {
    // NCCL's pipeline cuts the largest size's segments into its pieces.
    TunerFacts tf = tuner_facts(config.topology, static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(ranks, 1u << 30))));
    tf.nccl_version = config.network.nccl_version;
    tf.cpu_amd = config.network.cpu_amd;
    const TunerChoice choice = choose_algorithm(w.collective.op, biggest, tf, algo, w.collective.protocol);
    if (const auto pf = nccl_pipeline_facts(choice, w.collective.op, biggest, static_cast<int>(channels), tf.ranks, tf.nodes)) {
      facts.pieces = static_cast<std::uint64_t>(nccl_pieces(choice.protocol, *pf));
    }
  }
  const NvSwitchSpec* node = config.topology.kind == TopologyConfig::Kind::kNvSwitch ? &config.topology.nvswitch
                             : config.topology.kind == TopologyConfig::Kind::kCluster ? &config.topology.cluster.node
                                                                                       : nullptr;
  if (node != nullptr && node->nvls_bandwidth.bits_per_second > 0) {
    facts.nvls_gpus = std::min<std::uint64_t>(ranks, static_cast<std::uint64_t>(node->gpus));
    facts.nvls_channels = w.collective.channels > 1 ? static_cast<std::uint64_t>(w.collective.channels) : kNvlsChannels;
    const std::uint64_t chunk = w.collective.chunk_bytes > 0 ? static_cast<std::uint64_t>(w.collective.chunk_bytes) : kNvlsChunkBytes;
    facts.nvls_pieces = std::min<std::uint64_t>(
        4096, std::max<std::uint64_t>(1, (static_cast<std::uint64_t>(biggest) / facts.nvls_gpus / facts.nvls_channels + chunk - 1) / chunk));
  }
  // Every rank sends straight to every other in an AllToAll, whatever `algorithm` says;
  // `auto` may run the ring or NVLS-tree; custom algorithms count as a ring.
  const std::string& a = w.collective.op == CollectiveOp::kAllToAll ? std::string("direct") : w.collective.algorithm;
  ProgramFootprint footprint = ring_footprint(facts);
  if (a == "auto") {
    const ProgramFootprint nvls = find_collective_algorithm("nvls_tree")->footprint(facts);
    footprint.steps = std::max(footprint.steps, nvls.steps);
    footprint.bytes_per_step = nvls.bytes_per_step;
  } else if (const CollectiveAlgorithm* algorithm = find_collective_algorithm(a)) {
    footprint = algorithm->footprint(facts);
  }
  const std::uint64_t steps = footprint.steps, peers = footprint.peers, per_step = footprint.bytes_per_step;
  needs.message_bytes += ranks * (steps * per_step + peers * 2 * 700);
  return needs;
}

}  // namespace fabricsim
