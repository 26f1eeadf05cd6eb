#include "sim/endpoint/cc/dcqcn.h"

#include <algorithm>

namespace fabricsim {

void Dcqcn::start(CcFlow& f, double line_bps, Time /*network_rtt*/, Time now) const {
  f.rate_bps = line_bps;
  f.window_bytes = INT64_MAX;
  f.as<Flow>() = Flow{line_bps, 1.0, 0, 0, 0, false, now + c_.alpha_timer, now + c_.rate_increase_timer};
}

// A CNP: target = current (see clamp_target_rate), current *= 1 - alpha/2, alpha moves toward 1.
void Dcqcn::on_cnp(CcFlow& f, Time now) const {
  Flow& s = f.as<Flow>();
  if (c_.clamp_target_rate || s.timer_events + s.byte_events > 0) s.target_bps = f.rate_bps;
  f.rate_bps = std::max(c_.min_rate_bps, f.rate_bps * (1 - s.alpha / 2));
  s.alpha = (1 - c_.g) * s.alpha + c_.g;
  s.cnp_since_alpha_update = true;
  s.timer_events = s.byte_events = 0;
  s.bytes_since = 0;
  s.next_rate_increase = now + c_.rate_increase_timer;
}

// One increase event: fast recovery while both counters are below F, hyper increase
// once both are past it, additive increase in between.
void Dcqcn::increase(CcFlow& f, double line_bps) const {
  Flow& s = f.as<Flow>();
  const bool bytes_counted = c_.byte_counter > 0;
  const int hi = bytes_counted ? std::max(s.timer_events, s.byte_events) : s.timer_events;
  const int lo = bytes_counted ? std::min(s.timer_events, s.byte_events) : s.timer_events;
  if (hi >= c_.fast_recovery_rounds) {
    s.target_bps += lo > c_.fast_recovery_rounds ? (lo - c_.fast_recovery_rounds) * c_.hyper_increase_bps : c_.additive_increase_bps;
    s.target_bps = std::min(s.target_bps, line_bps);
  }
  f.rate_bps = std::min(line_bps, (f.rate_bps + s.target_bps) / 2);
}

void Dcqcn::on_sent(CcFlow& f, std::uint32_t wire_bytes, double line_bps, Time /*now*/) const {
  if (c_.byte_counter <= 0) return;
  Flow& s = f.as<Flow>();
  s.bytes_since += wire_bytes;
  if (s.bytes_since >= c_.byte_counter) {
    s.bytes_since -= c_.byte_counter;
    ++s.byte_events;
    increase(f, line_bps);
  }
}

Time Dcqcn::next_timer(const CcFlow& f) const {
  const Flow& s = f.as<Flow>();
  return std::min(s.next_alpha_update, s.next_rate_increase);
}

void Dcqcn::on_timer(CcFlow& f, double line_bps, Time now) const {
  Flow& s = f.as<Flow>();
  if (s.next_alpha_update <= now) {
    // Alpha decays when no CNP came for a whole period.
    if (!s.cnp_since_alpha_update) s.alpha *= 1 - c_.g;
    s.cnp_since_alpha_update = false;
    s.next_alpha_update = now + c_.alpha_timer;
  }
  if (s.next_rate_increase <= now) {
    ++s.timer_events;
    increase(f, line_bps);
    s.next_rate_increase = now + c_.rate_increase_timer;
  }
}

}  // namespace fabricsim
