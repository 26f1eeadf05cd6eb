#include "app/workload/trace_tuning.h"

#include <algorithm>

#include "app/workload/tuner_facts.h"
#include "workloads/collectives/nccl_costs.h"
#include "workloads/collectives/nccl_protocol.h"
#include "workloads/collectives/tuner.h"

namespace fabricsim {

namespace {

TunerFacts facts_for(const ScenarioConfig& config, const std::vector<HostId>& members) {
  TunerFacts f = tuner_facts_for_group(config.topology, members);
  apply_nccl_settings(f, config.network);
  // Flows carry NVLS's sums through the first switch, not SHARP's through the fabric.
  if (config.network.fidelity == NetworkConfig::Fidelity::kFlow) f.sharp = false;
  return f;
}

}  // namespace

CollectiveTuner trace_tuner(const ScenarioConfig& config) {
  const TraceWorkloadConfig& t = config.workload.trace;
  return [config, protocol = t.protocol, channels = t.channels](CollectiveOp op, const std::string& algorithm, std::int64_t bytes,
                                                               const std::vector<HostId>& members) {
    const TunerFacts facts = facts_for(config, members);
    const bool nccl = runs_nccl_model(protocol, facts);
    const TunerChoice choice = choose_algorithm(op, bytes, facts, algorithm, nccl ? protocol : "none");
    CollectiveTuning tuning;
    tuning.algorithm = choice.algorithm;
    if (choice.protocol == NcclProtocol::kNone) return tuning;  // the network alone, the config's channels
    // As `collective` runs a size: the config's channels, else NCCL's for what it chose;
    // NCCL's pipeline's pieces; NCCL's costs.
    tuning.channels = channels > 0 ? channels : std::max(1, choice.nccl_channels);
    tuning.chunk_bytes = nccl_chunk_bytes(choice, op, bytes, tuning.channels, facts);
    tuning.costs = nccl_costs(choice, facts, op, bytes, channels);
    if (choice.p2p) tuning.p2p_channels = choice.p2p->p2p_channels;
    return tuning;
  };
}

std::string trace_model_description(const ScenarioConfig& config) {
  TunerFacts f = tuner_facts(config.topology, 2);
  apply_nccl_settings(f, config.network);
  return model_description(config.workload.trace.protocol, f);
}

}  // namespace fabricsim
