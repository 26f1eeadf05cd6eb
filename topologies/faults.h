#pragma once
// What-if changes to a fabric, applied to the topology graph before routes are computed
// (so routing goes around what is down, as a fabric's routing would once it has
// converged): links down or degraded (lower bandwidth, added latency), named by their
// two ends, by tier (all of a tier, or a random fraction of it with a seed), or every
// link of a switch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/time.h"
#include "topologies/routing.h"
#include "topologies/topology.h"

namespace fabricsim {

struct FaultSpec {
  enum class Target : std::uint8_t { kLink, kSwitch, kTier };
  Target target = Target::kLink;
  std::string a, b;          // kLink: the two ends, by name (every link between them)
  std::string node;          // kSwitch: its name
  std::string tier;          // kTier: the builder's tier name ("fabric", "host", "nvlink", ...)
  double fraction = 1.0;     // kTier: this fraction of the tier's links, drawn with `seed`
  std::uint64_t seed = 1;
  bool down = false;
  std::optional<Bandwidth> bandwidth;  // degraded to this rate
  Time extra_latency = 0;              // added to the latency
  // When it fails (down only; -1: from the start), and how long routing takes to notice
  // and route around it (until then packets sent into it are lost).
  Time at = -1;
  Time detection = kDefaultDetection;
  // Loss of light with hardware ECMP fast failover (pre-programmed next-hop groups
  // updated without waiting for the routing protocol): about a millisecond. BFD-based
  // detection takes three of its intervals, 150 ms to 1 s (docs/config.md, "faults").
  static constexpr Time kDefaultDetection = 1'000'000'000;  // 1 ms
};

// One link a fault changed, for the results.
struct AppliedFault {
  std::size_t fault;  // index into the specs
  std::string a, b;
  std::string tier;
  bool down = false;
  Bandwidth bandwidth;  // after (down: as it was)
  Time latency = 0;
  Time at = -1;         // a timed failure: when, and when routing went around it
  Time detected = -1;
};

// A failure during the run: the links (indices into the topology as apply_faults left
// it) go down at `at`; routes avoid them from `detected` on.
struct TimedFault {
  std::size_t fault;
  Time at;
  Time detected;
  std::vector<std::size_t> links;
};

// Thrown for a fault that names nothing or asks for something impossible; `fault` is
// its index, for a located error.
struct FaultError {
  std::size_t fault;
  std::string what;
};

// Applies the faults that hold from the start (at < 0), in order. Throws FaultError.
std::vector<AppliedFault> apply_faults(Topology& topology, const std::vector<FaultSpec>& faults);

// The failures during the run (at >= 0), by time; only links between switches may fail
// then (an endpoint's own links would cut it off). Throws FaultError.
std::vector<TimedFault> timed_faults(const Topology& topology, const std::vector<FaultSpec>& faults);

// Routes of `topology` with the links marked in `down` gone, numbered by `topology`'s
// ports (a node's port k is its k-th link), so they can replace a compiled network's.
Routes routes_without(const Topology& topology, const std::vector<bool>& down);

}  // namespace fabricsim
