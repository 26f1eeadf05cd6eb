#include "calibrate/fill_fit.h"

#include "calibrate/fit.h"
#include "calibrate/least_squares.h"

#include <array>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

namespace fabricsim {

FillFit fit_fill(const std::vector<std::int64_t>& bytes, const std::vector<std::int64_t>& round_bytes,
                 const std::vector<double>& time_us, double latency_us, const std::vector<std::int64_t>& visits) {
  const std::size_t n = bytes.size();
  if (n < 2 || round_bytes.size() != n || time_us.size() != n || (!visits.empty() && visits.size() != n)) {
    throw std::invalid_argument("a fill fit needs at least two (size, time) points");
  }
  // (t - latency) / t = a x / t + b r / t + c v / t, a = 1/beta and b = rounds/beta in us
  // per byte, c the visit cost in us.
  std::vector<std::array<double, 3>> rows;
  std::vector<double> y;
  for (std::size_t i = 0; i < n; ++i) {
    if (time_us[i] <= latency_us) throw std::invalid_argument("a fill fit needs times above the fixed latency");
    if (bytes[i] <= 0) throw std::invalid_argument("a fill fit needs positive sizes");
    const double v = visits.empty() ? 0.0 : static_cast<double>(visits[i]);
    rows.push_back({static_cast<double>(bytes[i]) / time_us[i], static_cast<double>(round_bytes[i]) / time_us[i], v / time_us[i]});
    y.push_back((time_us[i] - latency_us) / time_us[i]);
  }
  // Every subset of the optional terms with the rate; the best fit whose terms are not
  // negative (the fill and the visits cannot give time back), the simpler on a tie.
  const std::vector<double> unit(n, 1.0);
  std::array<double, 3> best{};
  double best_ss = std::numeric_limits<double>::infinity();
  for (int mask = 0; mask < (visits.empty() ? 2 : 4); ++mask) {
    const std::array<bool, 3> use{true, (mask & 1) != 0, (mask & 2) != 0};
    std::vector<std::vector<double>> terms;
    for (const auto& row : rows) {
      std::vector<double> t;
      for (std::size_t j = 0; j < 3; ++j) {
        if (use[j]) t.push_back(row[j]);
      }
      terms.push_back(std::move(t));
    }
    const std::optional<std::vector<double>> x = weighted_least_squares(terms, y, unit);
    if (!x) continue;
    std::array<double, 3> c{};
    for (std::size_t j = 0, k = 0; j < 3; ++j) {
      if (use[j]) c[j] = (*x)[k++];
    }
    if (c[0] <= 0 || c[1] < 0 || c[2] < 0) continue;
    double ss = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double e = y[i] - (c[0] * rows[i][0] + c[1] * rows[i][1] + c[2] * rows[i][2]);
      ss += e * e;
    }
    if (ss < best_ss * (1 - 1e-12)) {
      best_ss = ss;
      best = c;
    }
  }
  if (!(best[0] > 0)) throw std::invalid_argument("a fill fit found no positive rate");
  FillFit f;
  f.latency_us = latency_us;
  f.beta_GBps = 1.0 / best[0] * 1e-3;  // bytes/us -> GB/s
  f.rounds = best[1] / best[0];
  f.visit_us = best[2];
  std::vector<double> fitted;
  for (std::size_t i = 0; i < n; ++i) {
    fitted.push_back(latency_us + (best[0] * rows[i][0] + best[1] * rows[i][1] + best[2] * rows[i][2]) * time_us[i]);
  }
  FitResiduals r = fit_residuals(time_us, fitted);
  f.residuals_us = std::move(r.residuals_us);
  f.relative_residuals = std::move(r.relative_residuals);
  f.rms_relative = r.rms_relative;
  return f;
}

}  // namespace fabricsim
