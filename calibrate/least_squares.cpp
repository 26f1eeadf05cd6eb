#include "calibrate/least_squares.h"

#include <cmath>
#include <utility>

namespace fabricsim {

namespace {
constexpr std::size_t kMaxTerms = 16;  // the fits have three at most
}  // namespace

std::optional<std::vector<double>> weighted_least_squares(const std::vector<std::vector<double>>& rows,
                                                          const std::vector<double>& y, const std::vector<double>& w) {
  if (rows.empty()) return std::nullopt;
  const std::size_t n = rows.front().size();
  if (n == 0 || n > kMaxTerms) return std::nullopt;
  std::vector<double> norm(n, 0.0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t p = 0; p < n; ++p) norm[p] += w[i] * rows[i][p] * rows[i][p];
  }
  for (double& v : norm) {
    v = std::sqrt(v);
    if (!(v > 0)) return std::nullopt;
  }
  // The normal equations of the scaled terms, the right-hand side in column n.
  std::vector<std::vector<double>> m(n, std::vector<double>(n + 1, 0.0));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t p = 0; p < n; ++p) {
      const double xp = rows[i][p] / norm[p];
      for (std::size_t q = 0; q < n; ++q) m[p][q] += w[i] * xp * rows[i][q] / norm[q];
      m[p][n] += w[i] * xp * y[i];
    }
  }
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t pivot = c;
    for (std::size_t r = c + 1; r < n; ++r) {
      if (std::fabs(m[r][c]) > std::fabs(m[pivot][c])) pivot = r;
    }
    // The scaled matrix has a unit diagonal: a pivot this small is a term the others explain.
    if (!(std::fabs(m[pivot][c]) > 1e-10)) return std::nullopt;
    std::swap(m[c], m[pivot]);
    for (std::size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = m[r][c] / m[c][c];
      for (std::size_t k = c; k <= n; ++k) m[r][k] -= f * m[c][k];
    }
  }
  std::vector<double> x(n);
  for (std::size_t p = 0; p < n; ++p) x[p] = m[p][n] / m[p][p] / norm[p];
  return x;
}

}  // namespace fabricsim
