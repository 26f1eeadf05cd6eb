#pragma once
// A pipeline's fill beside its rate: time = latency + (size + rounds x round(size)) / beta,
// the latency given, beta and rounds fitted by least squares of the relative error. For
// NCCL's NVLS kernels (nvls_pipeline_fill_ps), whose fixed cost NCCL's own model states
// and whose fill grows with the chunks they pipeline.
#include <cstdint>
#include <vector>

namespace fabricsim {

struct FillFit {
  double latency_us = 0;  // given
  double beta_GBps = 0;   // the rate at large sizes, 1e9 bytes/s
  double rounds = 0;      // unoverlapped rounds (at least 0)
  std::vector<double> residuals_us;        // measured minus fitted, per point
  std::vector<double> relative_residuals;  // residual / measured
  double rms_relative = 0;
};

// `round_bytes[i]`: one round's bytes at size bytes[i]. Throws std::invalid_argument with
// fewer than two points, sizes that cannot tell the rate from the fill (every round as
// large as its size, in proportion), or times not above the latency.
FillFit fit_fill(const std::vector<std::int64_t>& bytes, const std::vector<std::int64_t>& round_bytes,
                 const std::vector<double>& time_us, double latency_us);

}  // namespace fabricsim
