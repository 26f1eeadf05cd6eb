#pragma once
// HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019): every
// switch egress stamps in-band telemetry (queue length, bytes sent, time, line rate) on
// data packets and the receiver echoes it in the ack. Per ack the sender works out each
// hop's utilization, u = txRate / B + min(qlen, last qlen) / (B T), takes the most
// loaded hop, smooths it over one base RTT T, and sets its rate (and window, rate x T)
// toward a target utilization eta: multiplicatively down when above it (or after
// maxStage additive steps), additively up by R_AI otherwise. The reference rate moves
// once per RTT; acks in between only adjust the current rate ("fast react").
#include <cstdint>

#include "sim/endpoint/congestion_control.h"

namespace fabricsim {

struct HpccConfig {
  double eta = 0.95;                   // target utilization (paper: 95%)
  int max_stage = 5;                   // additive steps before a multiplicative one (paper: 5)
  double additive_increase_bps = 50e6; // R_AI (HPCC's ns-3 configs: RATE_AI 50Mb/s)
  double min_rate_bps = 100e6;
  // Base RTT T; 0: each flow's smallest RTT sample so far.
  Time base_rtt = 0;
};

class Hpcc final : public CongestionControl {
 public:
  explicit Hpcc(const HpccConfig& config) : c_(config) {}
  const char* name() const override { return "hpcc"; }
  const HpccConfig& config() const { return c_; }

  void start(CcFlow& f, double line_bps, Time network_rtt, Time now) const override;
  void on_ack(CcFlow& f, const AckFeedback& ack, double line_bps, Time now) const override;
  bool wants_telemetry() const override { return true; }

  struct Flow {
    double u;                      // smoothed utilization of the most loaded hop
    double reference_bps;          // Rc: the rate committed once per RTT
    Time base_rtt;                 // T
    std::uint32_t last_update_seq; // a full update once acks pass this (0: first RTT)
    int stage;                     // additive steps since the last multiplicative one
    std::uint8_t hops;             // INT records held
    IntHop hop[IntStack::kMaxHops];  // the last INT seen, per hop
  };

 private:
  HpccConfig c_;
};

}  // namespace fabricsim
