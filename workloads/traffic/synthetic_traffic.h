#pragma once
// Synthetic traffic for fabric studies, as lists of flows (source, destination, bytes,
// start) over endpoints 0..n-1. Deterministic for a given seed.
#include <cstdint>
#include <vector>

#include "sim/core/time.h"
#include "workloads/traffic/flow_size_cdf.h"

namespace fabricsim {

struct Flow {
  std::uint32_t src;
  std::uint32_t dst;
  std::int64_t bytes;
  Time start;
};

// Every endpoint sends `bytes` to a distinct other one (a random derangement).
std::vector<Flow> permutation_traffic(std::uint32_t endpoints, std::int64_t bytes, Time start, std::uint64_t seed);

// `senders` endpoints (the first ones other than the receiver) each send `bytes` to it.
std::vector<Flow> incast_traffic(std::uint32_t endpoints, std::uint32_t receiver, std::uint32_t senders,
                                 std::int64_t bytes, Time start);

// `flows` flows between uniformly random distinct pairs.
std::vector<Flow> uniform_traffic(std::uint32_t endpoints, std::uint32_t flows, std::int64_t bytes, Time start,
                                  std::uint64_t seed);

// Open-loop Poisson arrivals at every endpoint: rate = load * line_rate / mean size,
// sizes from `cdf`, destinations uniform among the others, arrivals in [start, start+duration).
// `line_rate_bps[e]` is endpoint e's rate.
std::vector<Flow> poisson_traffic(const std::vector<double>& line_rate_bps, double load, const FlowSizeCdf& cdf,
                                  Time start, Time duration, std::uint64_t seed);

}  // namespace fabricsim
