#pragma once
// How many threads build a run: the routes, a generated training step, the pages copied
// aside while it runs.
#include "app/config/config.h"
#include "app/scenario/memory_estimate.h"

namespace fabricsim {

// A flow-level run estimated at this much or more sets itself up on every core unasked.
inline constexpr std::uint64_t kLargeFlowSetup = std::uint64_t{4} << 30;

// --threads when given. Otherwise a flow-level run of kLargeFlowSetup or more takes `cores`
// (at most 16): it is one solver, so threads change its set-up's wall time and never its
// results. A packet-level run's threads split the run itself: one unless asked.
int setup_threads(const ScenarioConfig& config, const MemoryEstimate& estimate, unsigned cores);

}  // namespace fabricsim
