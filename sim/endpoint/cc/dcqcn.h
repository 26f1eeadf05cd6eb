#pragma once
// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM
// 2015): the receiver turns ECN marks into at most one CNP per flow per interval; the
// sender cuts its rate on each CNP and recovers on a timer and a byte counter through
// fast recovery, additive and hyper increase. docs/lossless.md gives each default's source.
#include <cstdint>

#include "sim/endpoint/congestion_control.h"

namespace fabricsim {

struct DcqcnConfig {
  Time cnp_interval = us(50);            // receiver: at most one CNP per flow per interval
  double g = 1.0 / 256;                  // alpha gain
  Time alpha_timer = us(55);             // alpha decays when no CNP arrived for this long
  // One increase event per period without a CNP. The paper's 55 us was set for 40 Gb/s;
  // at 100 Gb/s it recovers a cut so slowly that two flows stay unequal for tens of ms.
  // 20 us (55 us x 40/100, rounded down) is ours: docs/lossless.md has the measurements.
  Time rate_increase_timer = us(20);
  // One increase event per this many bytes sent; 0 turns the byte counter off, and then
  // the timer alone drives the stages (hyper increase after F timer events).
  std::int64_t byte_counter = 10'000'000;
  int fast_recovery_rounds = 5;          // F
  double additive_increase_bps = 40e6;   // R_AI
  double hyper_increase_bps = 400e6;     // R_HAI
  double min_rate_bps = 100e6;
  // Every CNP sets the target to the current rate (HPCC's ns-3 CLAMP_TARGET_RATE). Off,
  // a CNP that follows another with no increase between keeps the target, so a flow cut
  // repeatedly remembers the rate it had before the first cut.
  bool clamp_target_rate = true;
};

class Dcqcn final : public CongestionControl {
 public:
  explicit Dcqcn(const DcqcnConfig& config) : c_(config) {}
  const char* name() const override { return "dcqcn"; }
  const DcqcnConfig& config() const { return c_; }

  void start(CcFlow& f, double line_bps, Time network_rtt, Time now) const override;
  void on_sent(CcFlow& f, std::uint32_t wire_bytes, double line_bps, Time now) const override;
  void on_cnp(CcFlow& f, Time now) const override;
  Time next_timer(const CcFlow& f) const override;
  void on_timer(CcFlow& f, double line_bps, Time now) const override;
  Time cnp_interval() const override { return c_.cnp_interval; }
  bool ecn_capable() const override { return true; }

  // One flow's reaction-point state (its current rate is CcFlow::rate_bps).
  struct Flow {
    double target_bps;  // Rt
    double alpha;
    int timer_events;   // increase events from the timer since the last cut
    int byte_events;    // ... and from the byte counter
    std::int64_t bytes_since;
    bool cnp_since_alpha_update;
    Time next_alpha_update;
    Time next_rate_increase;
  };

 private:
  void increase(CcFlow& f, double line_bps) const;

  DcqcnConfig c_;
};

}  // namespace fabricsim
