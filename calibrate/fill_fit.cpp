#include "calibrate/fill_fit.h"

#include "calibrate/fit.h"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace fabricsim {
namespace {

constexpr int kTerms = 3;  // size / beta, rounds x round / beta, visits x visit cost
using Vec = std::array<double, kTerms>;

// Least squares of y on the terms `use` marks, by the normal equations, each term scaled
// to unit norm first (they differ in scale by many orders), then Gauss-Jordan elimination
// with partial pivoting; false where the terms cannot be told apart.
bool solve(const std::vector<Vec>& rows, const std::vector<double>& y, const std::array<bool, kTerms>& use, Vec& out) {
  int idx[kTerms];
  int m = 0;
  for (int j = 0; j < kTerms; ++j) {
    if (use[static_cast<std::size_t>(j)]) idx[m++] = j;
  }
  double norm[kTerms] = {};
  for (int p = 0; p < m; ++p) {
    for (const Vec& r : rows) norm[p] += r[static_cast<std::size_t>(idx[p])] * r[static_cast<std::size_t>(idx[p])];
    norm[p] = std::sqrt(norm[p]);
    if (!(norm[p] > 0)) return false;
  }
  double a[kTerms][kTerms + 1] = {};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (int p = 0; p < m; ++p) {
      const double xp = rows[i][static_cast<std::size_t>(idx[p])] / norm[p];
      for (int q = 0; q < m; ++q) a[p][q] += xp * rows[i][static_cast<std::size_t>(idx[q])] / norm[q];
      a[p][m] += xp * y[i];
    }
  }
  for (int c = 0; c < m; ++c) {
    int pivot = c;
    for (int r = c + 1; r < m; ++r) {
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    }
    if (!(std::fabs(a[pivot][c]) > 1e-10)) return false;
    if (pivot != c) {
      for (int q = 0; q <= m; ++q) std::swap(a[c][q], a[pivot][q]);
    }
    for (int r = 0; r < m; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (int q = c; q <= m; ++q) a[r][q] -= f * a[c][q];
    }
  }
  out = Vec{};
  for (int p = 0; p < m; ++p) out[static_cast<std::size_t>(idx[p])] = a[p][m] / a[p][p] / norm[p];
  return true;
}

}  // namespace

FillFit fit_fill(const std::vector<std::int64_t>& bytes, const std::vector<std::int64_t>& round_bytes,
                 const std::vector<double>& time_us, double latency_us, const std::vector<std::int64_t>& visits) {
  const std::size_t n = bytes.size();
  if (n < 2 || round_bytes.size() != n || time_us.size() != n || (!visits.empty() && visits.size() != n)) {
    throw std::invalid_argument("a fill fit needs at least two (size, time) points");
  }
  // (t - latency) / t = a x / t + b r / t + c v / t, a = 1/beta and b = rounds/beta in us
  // per byte, c the visit cost in us.
  std::vector<Vec> rows;
  std::vector<double> y;
  for (std::size_t i = 0; i < n; ++i) {
    if (time_us[i] <= latency_us) throw std::invalid_argument("a fill fit needs times above the fixed latency");
    if (bytes[i] <= 0) throw std::invalid_argument("a fill fit needs positive sizes");
    const double v = visits.empty() ? 0.0 : static_cast<double>(visits[i]);
    rows.push_back({static_cast<double>(bytes[i]) / time_us[i], static_cast<double>(round_bytes[i]) / time_us[i], v / time_us[i]});
    y.push_back((time_us[i] - latency_us) / time_us[i]);
  }
  // Every subset of the optional terms with the rate; the best fit whose terms are not
  // negative (the fill and the visits cannot give time back).
  Vec best{};
  double best_ss = std::numeric_limits<double>::infinity();
  for (int mask = 0; mask < 4; ++mask) {
    const std::array<bool, kTerms> use{true, (mask & 1) != 0, (mask & 2) != 0 && !visits.empty()};
    if ((mask & 2) != 0 && visits.empty()) continue;
    Vec c{};
    if (!solve(rows, y, use, c) || c[0] <= 0 || c[1] < 0 || c[2] < 0) continue;
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
