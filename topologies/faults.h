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

#include "sim/time.h"
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
};

// One link a fault changed, for the results.
struct AppliedFault {
  std::size_t fault;  // index into the specs
  std::string a, b;
  std::string tier;
  bool down = false;
  Bandwidth bandwidth;  // after (down: as it was)
  Time latency = 0;
};

// Thrown for a fault that names nothing or asks for something impossible; `fault` is
// its index, for a located error.
struct FaultError {
  std::size_t fault;
  std::string what;
};

// Applies `faults` in order. Throws FaultError.
std::vector<AppliedFault> apply_faults(Topology& topology, const std::vector<FaultSpec>& faults);

}  // namespace fabricsim
