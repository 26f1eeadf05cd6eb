#include "calibrate/fit.h"

#include <cmath>
#include <stdexcept>

namespace fabricsim {

AlphaBetaFit fit_alpha_beta(const std::vector<std::int64_t>& bytes, const std::vector<double>& time_us) {
  const std::size_t n = bytes.size();
  if (n < 2 || time_us.size() != n) throw std::invalid_argument("a fit needs at least two (size, time) points");
  // Ordinary least squares of t = a + b x, x in bytes: b = cov(x, t) / var(x).
  double mx = 0, mt = 0;
  for (std::size_t i = 0; i < n; ++i) {
    mx += static_cast<double>(bytes[i]);
    mt += time_us[i];
  }
  mx /= static_cast<double>(n);
  mt /= static_cast<double>(n);
  double sxx = 0, sxt = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = static_cast<double>(bytes[i]) - mx;
    sxx += dx * dx;
    sxt += dx * (time_us[i] - mt);
  }
  if (sxx == 0) throw std::invalid_argument("a fit needs at least two distinct sizes");
  const double slope = sxt / sxx;  // us per byte
  AlphaBetaFit f;
  f.alpha_us = mt - slope * mx;
  f.beta_GBps = slope > 0 ? 1.0 / slope * 1e-3 : INFINITY;  // bytes/us -> GB/s
  double sq = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double fitted = f.alpha_us + slope * static_cast<double>(bytes[i]);
    f.residuals_us.push_back(time_us[i] - fitted);
    f.relative_residuals.push_back((time_us[i] - fitted) / time_us[i]);
    sq += f.relative_residuals.back() * f.relative_residuals.back();
  }
  f.rms_relative = std::sqrt(sq / static_cast<double>(n));
  return f;
}

}  // namespace fabricsim
