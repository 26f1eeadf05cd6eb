#pragma once
// What the tuner (workloads/collectives/tuner.h) needs of a configured topology: per GPU
// and per node, NVLink, NVLS, NICs and the simulated network's own step latencies.
#include <cstdint>
#include <string>
#include <vector>

#include "app/config/config.h"
#include "workloads/collectives/tuner.h"

namespace fabricsim {

TunerFacts tuner_facts(const TopologyConfig& topology, int ranks);
// The same for a group of endpoints (a trace's collective): on a cluster, how many
// nodes its members span and how many GPUs of each (whole nodes only if every node has
// the same count); its NICs are those of the member GPUs.
TunerFacts tuner_facts_for_group(const TopologyConfig& topology, const std::vector<std::uint32_t>& hosts);

// The network section's NCCL settings (its rules' version, the host CPU, NCCL_MIN_CTAS,
// NCCL_MAX_CTAS, NCCL_IB_QPS_PER_CONNECTION) on facts for its topology.
void apply_nccl_settings(TunerFacts& facts, const NetworkConfig& network);

// Whether NCCL's model applies: a protocol other than none, on a fabric with GPUs.
bool runs_nccl_model(const std::string& protocol, const TunerFacts& facts);
// Which model runs, for results: NCCL's (its rules' version, the protocol) or the ideal network.
std::string model_description(const std::string& protocol, const TunerFacts& facts);

}  // namespace fabricsim
