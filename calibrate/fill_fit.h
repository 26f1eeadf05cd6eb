#pragma once
// A pipeline's fill and its per-visit cost beside its rate:
// time = latency + (size + rounds x round(size)) / beta + visits(size) x visit_cost,
// the latency given; beta, rounds and the visit cost fitted by least squares of the
// relative error, rounds and the visit cost at least 0. For NCCL's NVLS kernels
// (nvls_pipeline_fill_ps, nvls_head_visits_ps), whose fixed cost NCCL's own model states,
// whose fill grows with the chunks they pipeline and whose scatter and gather visit every
// head once a round.
#include <cstdint>
#include <vector>

namespace fabricsim {

struct FillFit {
  double latency_us = 0;  // given
  double beta_GBps = 0;   // the rate at large sizes, 1e9 bytes/s
  double rounds = 0;      // unoverlapped rounds (at least 0)
  double visit_us = 0;    // the cost of one visit (at least 0)
  std::vector<double> residuals_us;        // measured minus fitted, per point
  std::vector<double> relative_residuals;  // residual / measured
  double rms_relative = 0;
};

// `round_bytes[i]`: one round's bytes at size bytes[i]; `visits[i]`: the visits a channel
// makes there (empty: none, the visit cost 0). Throws std::invalid_argument with fewer than
// two points, or times not above the latency. Terms the points cannot tell apart from the
// rate are left at 0.
FillFit fit_fill(const std::vector<std::int64_t>& bytes, const std::vector<std::int64_t>& round_bytes,
                 const std::vector<double>& time_us, double latency_us, const std::vector<std::int64_t>& visits = {});

}  // namespace fabricsim
