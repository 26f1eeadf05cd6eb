#include "workloads/traffic/synthetic_traffic.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "sim/core/rng.h"

namespace fabricsim {
namespace {
// Each generator draws from its own stream, so adding one never shifts another's draws.
Rng stream(std::uint64_t seed, std::uint64_t salt) { return Rng(seed * 0x9e3779b97f4a7c15ull + salt); }

std::uint32_t other_than(Rng& rng, std::uint32_t endpoints, std::uint32_t self) {
  auto d = static_cast<std::uint32_t>(rng.below(endpoints - 1));
  return d >= self ? d + 1 : d;
}
}  // namespace

std::vector<Flow> permutation_traffic(std::uint32_t endpoints, std::int64_t bytes, Time start, std::uint64_t seed) {
  if (endpoints < 2) throw std::invalid_argument("a permutation needs two endpoints");
  Rng rng = stream(seed, 1);
  // Sattolo's algorithm: a uniformly random single cycle, so nobody sends to itself.
  std::vector<std::uint32_t> to(endpoints);
  std::iota(to.begin(), to.end(), 0u);
  for (std::uint32_t i = endpoints - 1; i > 0; --i) std::swap(to[i], to[rng.below(i)]);
  std::vector<Flow> flows;
  for (std::uint32_t e = 0; e < endpoints; ++e) flows.push_back({e, to[e], bytes, start});
  return flows;
}

std::vector<Flow> incast_traffic(std::uint32_t endpoints, std::uint32_t receiver, std::uint32_t senders,
                                 std::int64_t bytes, Time start) {
  if (senders == 0 || senders >= endpoints) throw std::invalid_argument("incast senders must be from 1 to endpoints - 1");
  std::vector<Flow> flows;
  for (std::uint32_t e = 0; flows.size() < senders; ++e) {
    if (e != receiver) flows.push_back({e, receiver, bytes, start});
  }
  return flows;
}

std::vector<Flow> uniform_traffic(std::uint32_t endpoints, std::uint32_t count, std::int64_t bytes, Time start,
                                  std::uint64_t seed) {
  if (endpoints < 2) throw std::invalid_argument("uniform traffic needs two endpoints");
  Rng rng = stream(seed, 2);
  std::vector<Flow> flows;
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto src = static_cast<std::uint32_t>(rng.below(endpoints));
    flows.push_back({src, other_than(rng, endpoints, src), bytes, start});
  }
  return flows;
}

std::vector<Flow> poisson_traffic(const std::vector<double>& line_rate_bps, double load, const FlowSizeCdf& cdf,
                                  Time start, Time duration, std::uint64_t seed) {
  const auto endpoints = static_cast<std::uint32_t>(line_rate_bps.size());
  if (endpoints < 2) throw std::invalid_argument("Poisson traffic needs two endpoints");
  std::vector<Flow> flows;
  const double mean_bits = cdf.mean() * 8;
  for (std::uint32_t e = 0; e < endpoints; ++e) {
    Rng rng = stream(seed, 1000 + e);
    const double per_ps = load * line_rate_bps[e] / mean_bits * 1e-12;  // arrivals per picosecond
    double t = static_cast<double>(start);
    for (;;) {
      t += -std::log(1.0 - rng.uniform()) / per_ps;  // exponential gap
      if (t >= static_cast<double>(start + duration)) break;
      const std::int64_t bytes = cdf.sample(rng);
      flows.push_back({e, other_than(rng, endpoints, e), bytes, static_cast<Time>(t)});
    }
  }
  std::stable_sort(flows.begin(), flows.end(), [](const Flow& a, const Flow& b) { return a.start < b.start; });
  return flows;
}

}  // namespace fabricsim
