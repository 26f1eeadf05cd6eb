#pragma once
// How a replayed trace's collectives run: each is tuned as `collective` tunes a size
// (NCCL's model on fabrics with GPUs: its algorithm under `auto`, its protocol, channels
// and pipeline pieces, and NCCL's costs on the program), for its own members.
#include <functional>
#include <string>
#include <vector>

#include "app/config/config.h"
#include "workloads/traces/trace_replay.h"

namespace fabricsim {

using CollectiveTuner = std::function<CollectiveTuning(CollectiveOp, const std::string&, std::int64_t, const std::vector<HostId>&)>;

CollectiveTuner trace_tuner(const ScenarioConfig& config);

// Which model the trace's collectives run under, for results.
std::string trace_model_description(const ScenarioConfig& config);

}  // namespace fabricsim
