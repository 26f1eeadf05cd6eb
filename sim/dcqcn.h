#pragma once
// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM
// 2015): the receiver turns ECN marks into at most one CNP per flow per interval; the
// sender cuts its rate on each CNP and recovers on a timer and a byte counter through
// fast recovery, additive and hyper increase. docs/lossless.md gives each default's source.
#include <algorithm>
#include <cstdint>

#include "sim/time.h"

namespace fabricsim {

struct DcqcnConfig {
  bool enabled = false;
  Time cnp_interval = us(50);            // receiver: at most one CNP per flow per interval
  double g = 1.0 / 256;                  // alpha gain
  Time alpha_timer = us(55);             // alpha decays when no CNP arrived for this long
  // One increase event per period without a CNP. The paper's 55 us was set for 40 Gb/s;
  // at 100 Gb/s it recovers a cut so slowly that two flows stay unequal for tens of ms.
  // 20 us (55 us x 40/100, rounded down) is ours: docs/lossless.md has the measurements.
  Time rate_increase_timer = us(20);
  std::int64_t byte_counter = 10'000'000;  // one increase event per this many bytes sent
  int fast_recovery_rounds = 5;          // F
  double additive_increase_bps = 40e6;   // R_AI
  double hyper_increase_bps = 400e6;     // R_HAI
  double min_rate_bps = 100e6;
};

// One flow's sender state (the reaction point).
struct DcqcnFlow {
  double rate_bps = 0;    // Rc: current
  double target_bps = 0;  // Rt
  double alpha = 1.0;
  int timer_events = 0;   // increase events from the timer since the last cut
  int byte_events = 0;    // ... and from the byte counter
  std::int64_t bytes_since = 0;
  bool cnp_since_alpha_update = false;
  Time next_alpha_update = 0;
  Time next_rate_increase = 0;

  void start(double line_rate_bps, Time now, const DcqcnConfig& c) {
    rate_bps = target_bps = line_rate_bps;
    alpha = 1.0;
    next_alpha_update = now + c.alpha_timer;
    next_rate_increase = now + c.rate_increase_timer;
  }
  // A CNP: target = current, current *= 1 - alpha/2, alpha moves toward 1.
  void on_cnp(Time now, const DcqcnConfig& c) {
    target_bps = rate_bps;
    rate_bps = std::max(c.min_rate_bps, rate_bps * (1 - alpha / 2));
    alpha = (1 - c.g) * alpha + c.g;
    cnp_since_alpha_update = true;
    timer_events = byte_events = 0;
    bytes_since = 0;
    next_rate_increase = now + c.rate_increase_timer;
  }
  void on_alpha_timer(Time now, const DcqcnConfig& c) {
    if (!cnp_since_alpha_update) alpha *= 1 - c.g;
    cnp_since_alpha_update = false;
    next_alpha_update = now + c.alpha_timer;
  }
  // One increase event: fast recovery while both counters are below F, hyper increase
  // once both are past it, additive increase in between.
  void increase(double line_rate_bps, const DcqcnConfig& c) {
    const int hi = std::max(timer_events, byte_events), lo = std::min(timer_events, byte_events);
    if (hi >= c.fast_recovery_rounds) {
      target_bps += lo > c.fast_recovery_rounds ? (lo - c.fast_recovery_rounds) * c.hyper_increase_bps
                                                : c.additive_increase_bps;
      target_bps = std::min(target_bps, line_rate_bps);
    }
    rate_bps = std::min(line_rate_bps, (rate_bps + target_bps) / 2);
  }
  void on_rate_timer(Time now, double line_rate_bps, const DcqcnConfig& c) {
    ++timer_events;
    increase(line_rate_bps, c);
    next_rate_increase = now + c.rate_increase_timer;
  }
  void on_bytes_sent(std::int64_t bytes, double line_rate_bps, const DcqcnConfig& c) {
    bytes_since += bytes;
    if (bytes_since >= c.byte_counter) {
      bytes_since -= c.byte_counter;
      ++byte_events;
      increase(line_rate_bps, c);
    }
  }
};

}  // namespace fabricsim
