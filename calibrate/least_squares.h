#pragma once
// Linear least squares for the calibration fits: minimise sum_i w_i (x . a_i - y_i)^2 by the
// normal equations. Each term is scaled to unit weighted norm first, as the fits' terms
// (fixed costs in us, inverse rates in us per byte) differ in scale by many orders, then
// solved by Gauss-Jordan elimination with partial pivoting.
#include <optional>
#include <vector>

namespace fabricsim {

// `rows[i]` holds point i's terms (all rows as long as the first, at most 16 terms); nullopt
// where the points cannot tell the terms apart (a term all zero, or two in proportion).
std::optional<std::vector<double>> weighted_least_squares(const std::vector<std::vector<double>>& rows,
                                                          const std::vector<double>& y, const std::vector<double>& w);

}  // namespace fabricsim
