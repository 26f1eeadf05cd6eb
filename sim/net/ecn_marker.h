#pragma once
// RED-style ECN marking as switches do it for DCQCN: no mark below Kmin bytes queued,
// probability rising linearly from 0 at Kmin to Pmax at Kmax, and always above Kmax.
#include <cstdint>
#include <vector>

#include "sim/core/rng.h"

namespace fabricsim {

struct EcnConfig {
  bool enabled = false;
  std::int64_t kmin_bytes = 5'000;    // DCQCN paper (Zhu et al., SIGCOMM 2015): 5 KB
  std::int64_t kmax_bytes = 200'000;  // 200 KB
  double pmax = 0.01;                 // 1%
  bool mark_on_dequeue = false;       // else on enqueue

  bool operator==(const EcnConfig&) const = default;

  // Marking probability with `queued_bytes` waiting in the packet's class queue.
  double probability(std::int64_t queued_bytes) const {
    if (queued_bytes <= kmin_bytes) return 0.0;
    if (queued_bytes >= kmax_bytes) return 1.0;
    return pmax * static_cast<double>(queued_bytes - kmin_bytes) / static_cast<double>(kmax_bytes - kmin_bytes);
  }
  bool should_mark(std::int64_t queued_bytes, Rng& rng) const {
    const double p = probability(queued_bytes);
    return p >= 1.0 || (p > 0.0 && rng.uniform() < p);
  }
};

// Thresholds for ports of one speed: deployments scale Kmin and Kmax with the line rate
// (HPCC's ns-3 configs: KMIN_MAP/KMAX_MAP, e.g. 100/400 KB at 25G, 400/1600 KB at 100G).
struct EcnForSpeed {
  std::int64_t bits_per_second;
  EcnConfig ecn;

  bool operator==(const EcnForSpeed&) const = default;
};

// The marking a port of `bits_per_second` uses: its speed's entry, else the default.
inline const EcnConfig& ecn_for_speed(const EcnConfig& fallback, const std::vector<EcnForSpeed>& by_speed, std::int64_t bits_per_second) {
  for (const EcnForSpeed& e : by_speed) {
    if (e.bits_per_second == bits_per_second) return e.ecn;
  }
  return fallback;
}

}  // namespace fabricsim
