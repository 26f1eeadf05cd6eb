#include "calibrate/fit.h"

#include <cmath>
#include <stdexcept>
#include <utility>

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
  std::vector<double> fitted;
  for (std::size_t i = 0; i < n; ++i) fitted.push_back(f.alpha_us + slope * static_cast<double>(bytes[i]));
  FitResiduals r = fit_residuals(time_us, fitted);
  f.residuals_us = std::move(r.residuals_us);
  f.relative_residuals = std::move(r.relative_residuals);
  f.rms_relative = r.rms_relative;
  return f;
}

FitResiduals fit_residuals(const std::vector<double>& time_us, const std::vector<double>& fitted_us) {
  FitResiduals r;
  double sq = 0;
  for (std::size_t i = 0; i < time_us.size() && i < fitted_us.size(); ++i) {
    r.residuals_us.push_back(time_us[i] - fitted_us[i]);
    r.relative_residuals.push_back((time_us[i] - fitted_us[i]) / time_us[i]);
    sq += r.relative_residuals.back() * r.relative_residuals.back();
  }
  if (!r.relative_residuals.empty()) r.rms_relative = std::sqrt(sq / static_cast<double>(r.relative_residuals.size()));
  return r;
}

}  // namespace fabricsim
