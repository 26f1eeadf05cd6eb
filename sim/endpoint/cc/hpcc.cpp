#include "sim/endpoint/cc/hpcc.h"

#include <algorithm>

namespace fabricsim {

void Hpcc::start(CcFlow& f, double line_bps, Time network_rtt, Time /*now*/) const {
  Flow& s = f.as<Flow>();
  s = Flow{};
  s.reference_bps = line_bps;
  s.base_rtt = c_.base_rtt > 0 ? c_.base_rtt : network_rtt;
  f.rate_bps = line_bps;
  // W_init: one base RTT at line rate (unbounded until a sample, if T is unknown).
  f.window_bytes = s.base_rtt > 0 ? static_cast<std::int64_t>(line_bps / 8 * to_seconds(s.base_rtt)) : INT64_MAX;
}

void Hpcc::on_ack(CcFlow& f, const AckFeedback& ack, double line_bps, Time /*now*/) const {
  Flow& s = f.as<Flow>();
  if (s.base_rtt == 0 && ack.rtt > 0) s.base_rtt = ack.rtt;  // T unknown: the first sample
  const IntStack* in = ack.telemetry;
  if (in == nullptr || in->hops == 0 || s.base_rtt <= 0) return;
  const double t_ns = static_cast<double>(s.base_rtt) / 1000;
  if (s.last_update_seq == 0 || s.hops != in->hops) {
    // First RTT (or a new path): keep the telemetry to compare against.
    s.last_update_seq = ack.next_seq;
    s.hops = in->hops;
    std::copy(in->hop, in->hop + in->hops, s.hop);
    return;
  }
  const bool full_update = ack.acked_packets > s.last_update_seq;
  double worst = 0;
  double worst_tau_ns = 0;
  for (int i = 0; i < in->hops; ++i) {
    const IntHop& now_hop = in->hop[i];
    IntHop& last = s.hop[i];
    const std::uint32_t tau = now_hop.time_ns - last.time_ns;  // mod 2^32: exact under 4.29 s
    if (tau == 0) continue;
    const double line = static_cast<double>(now_hop.rate_mbps) * 1e6;
    const double tx_bps = static_cast<double>(now_hop.tx_bytes - last.tx_bytes) * 8 / (tau * 1e-9);
    const double queue = static_cast<double>(std::min(now_hop.queue_bytes, last.queue_bytes));
    const double u = tx_bps / line + queue * 8 / (line * t_ns * 1e-9);
    if (u > worst) {
      worst = u;
      worst_tau_ns = tau;
    }
    last = now_hop;
  }
  const double dt = std::min(worst_tau_ns, t_ns);
  s.u = (s.u * (t_ns - dt) + worst * dt) / t_ns;
  const double ratio = s.u / c_.eta;
  double rate;
  int stage;
  if (ratio >= 1 || s.stage >= c_.max_stage) {
    rate = ratio > 0 ? s.reference_bps / ratio + c_.additive_increase_bps : line_bps;
    stage = 0;
  } else {
    rate = s.reference_bps + c_.additive_increase_bps;
    stage = s.stage + 1;
  }
  rate = std::clamp(rate, c_.min_rate_bps, line_bps);
  f.rate_bps = rate;
  f.window_bytes = static_cast<std::int64_t>(rate / 8 * t_ns * 1e-9);
  if (full_update) {
    s.reference_bps = rate;
    s.stage = stage;
    s.last_update_seq = std::max(s.last_update_seq, ack.next_seq);
  }
}

}  // namespace fabricsim
