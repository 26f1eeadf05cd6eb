#pragma once
// The latency-plus-bandwidth model of a collective, time = alpha + size / beta, fitted by
// least squares over (size, time) points; residuals say how well it holds.
#include <cstdint>
#include <vector>

namespace fabricsim {

struct AlphaBetaFit {
  double alpha_us = 0;     // fixed cost per operation
  double beta_GBps = 0;    // algorithm bandwidth at large sizes, 1e9 bytes/s
  std::vector<double> residuals_us;        // measured minus fitted, per point
  std::vector<double> relative_residuals;  // residual / measured
  double rms_relative = 0;
};

// Measured minus fitted times, each over its measured time, and the relative error's rms.
struct FitResiduals {
  std::vector<double> residuals_us;
  std::vector<double> relative_residuals;
  double rms_relative = 0;
};
FitResiduals fit_residuals(const std::vector<double>& time_us, const std::vector<double>& fitted_us);

// Throws std::invalid_argument with fewer than two distinct sizes. `relative`: least
// squares of the relative error (each point weighted by 1/time), so that small sizes
// count as much as large ones.
AlphaBetaFit fit_alpha_beta(const std::vector<std::int64_t>& bytes, const std::vector<double>& time_us,
                            bool relative = false);

}  // namespace fabricsim
