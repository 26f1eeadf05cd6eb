#include "calibrate/fit.h"

#include <cmath>
#include <stdexcept>

namespace fabricsim {

AlphaBetaFit fit_alpha_beta(const std::vector<std::int64_t>& bytes, const std::vector<double>& time_us, bool relative) {
  const std::size_t n = bytes.size();
  if (n < 2 || time_us.size() != n) throw std::invalid_argument("a fit needs at least two (size, time) points");
  // Weighted least squares of t = a + b x, x in bytes: b = cov(x, t) / var(x) under
  // weights w (1, or 1/t^2 for relative errors).
  std::vector<double> w(n, 1.0);
  if (relative) {
    for (std::size_t i = 0; i < n; ++i) w[i] = time_us[i] > 0 ? 1.0 / (time_us[i] * time_us[i]) : 0.0;
  }
  double sw = 0, mx = 0, mt = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sw += w[i];
    mx += w[i] * static_cast<double>(bytes[i]);
    mt += w[i] * time_us[i];
  }
  if (sw <= 0) throw std::invalid_argument("a fit needs positive times");
  mx /= sw;
  mt /= sw;
  double sxx = 0, sxt = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = static_cast<double>(bytes[i]) - mx;
    sxx += w[i] * dx * dx;
    sxt += w[i] * dx * (time_us[i] - mt);
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
