#include "calibrate/fill_fit.h"

#include "calibrate/fit.h"

#include <stdexcept>
#include <utility>

namespace fabricsim {

FillFit fit_fill(const std::vector<std::int64_t>& bytes, const std::vector<std::int64_t>& round_bytes,
                 const std::vector<double>& time_us, double latency_us) {
  const std::size_t n = bytes.size();
  if (n < 2 || round_bytes.size() != n || time_us.size() != n) throw std::invalid_argument("a fill fit needs at least two (size, time) points");
  // (t - latency) / t = a x / t + b r / t, a = 1/beta and b = rounds/beta in us per byte:
  // two unknowns by the normal equations.
  double s11 = 0, s12 = 0, s22 = 0, t1 = 0, t2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (time_us[i] <= latency_us) throw std::invalid_argument("a fill fit needs times above the fixed latency");
    const double x = static_cast<double>(bytes[i]) / time_us[i];
    const double r = static_cast<double>(round_bytes[i]) / time_us[i];
    const double y = (time_us[i] - latency_us) / time_us[i];
    s11 += x * x;
    s12 += x * r;
    s22 += r * r;
    t1 += x * y;
    t2 += r * y;
  }
  const double det = s11 * s22 - s12 * s12;
  double a = 0, b = 0;
  if (det > 1e-12 * s11 * s22) {
    a = (t1 * s22 - t2 * s12) / det;
    b = (s11 * t2 - s12 * t1) / det;
  }
  if (det <= 1e-12 * s11 * s22 || b < 0) {  // no fill to be seen: the rate alone
    if (s11 <= 0) throw std::invalid_argument("a fill fit needs positive sizes");
    a = t1 / s11;
    b = 0;
  }
  if (a <= 0) throw std::invalid_argument("a fill fit found no positive rate");
  FillFit f;
  f.latency_us = latency_us;
  f.beta_GBps = 1.0 / a * 1e-3;  // bytes/us -> GB/s
  f.rounds = b / a;
  std::vector<double> fitted;
  for (std::size_t i = 0; i < n; ++i) {
    fitted.push_back(latency_us + a * static_cast<double>(bytes[i]) + b * static_cast<double>(round_bytes[i]));
  }
  FitResiduals r = fit_residuals(time_us, fitted);
  f.residuals_us = std::move(r.residuals_us);
  f.relative_residuals = std::move(r.relative_residuals);
  f.rms_relative = r.rms_relative;
  return f;
}

}  // namespace fabricsim
