#pragma once
// How many threads build and run a scenario: the routes, a generated training step, the
// pages copied aside while it runs, and the partitions of a split packet-level run.
#include <cstddef>

#include "app/config/config.h"
#include "app/scenario/memory_estimate.h"
#include "sim/core/time.h"

namespace fabricsim {

// A flow-level run estimated at this much or more sets itself up on every core unasked.
inline constexpr std::uint64_t kLargeFlowSetup = std::uint64_t{4} << 30;

// A packet-level run splits itself unasked into partitions of at least this many hosts
// (so from twice as many, up to every core)...
inline constexpr std::size_t kLeastHostsPerUnaskedPartition = 64;
// ...where its longest links, the ones a split cuts, are at least this long: the split's
// windows are no longer than they (validate warns of shorter ones).
inline constexpr Time kLeastUnaskedLookahead = ns(100);

// --threads when given. Otherwise a flow-level run of kLargeFlowSetup or more takes `cores`
// (at most 16): it is one solver, so threads change its set-up's wall time and never its
// results. A packet-level run's threads split the run itself (split_threads).
int setup_threads(const ScenarioConfig& config, const MemoryEstimate& estimate, unsigned cores);

// The threads a packet-level run is split over when --threads was not given: `cores`, at
// most 16 and at most one per kLeastHostsPerUnaskedPartition hosts, where its links reach
// kLeastUnaskedLookahead (a split run gives the same results and pays for its windows);
// 0 (one queue) where that is under 2 threads, under mpirun, at flow fidelity, or where the
// run cannot be split (`splittable` false).
int split_threads(const ScenarioConfig& config, std::size_t hosts, Time longest_link, bool splittable, unsigned cores);

// The cores a run may take unasked: FABRICSIM_CORES when set (a sweep's runs at once share
// the machine through it), else the CPUs this process may run on, else
// std::thread::hardware_concurrency(); 0 when none of them says.
unsigned usable_cores();

}  // namespace fabricsim
