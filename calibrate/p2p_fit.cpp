#include "calibrate/p2p_fit.h"

#include "calibrate/least_squares.h"

#include <array>
#include <optional>
#include <stdexcept>

namespace fabricsim {

namespace {

// Least squares of sum ((x . a_i - y_i) / t_i)^2 over the points.
template <std::size_t N>
std::array<double, N> solve(const std::vector<std::array<double, N>>& rows, const std::vector<double>& y, const std::vector<double>& t) {
  std::vector<std::vector<double>> terms;
  std::vector<double> w;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    terms.emplace_back(rows[i].begin(), rows[i].end());
    w.push_back(1.0 / (t[i] * t[i]));
  }
  const std::optional<std::vector<double>> x = weighted_least_squares(terms, y, w);
  if (!x) throw std::invalid_argument("a p2p kernel fit needs sizes that tell its figures apart");
  std::array<double, N> out{};
  for (std::size_t r = 0; r < N; ++r) out[r] = (*x)[r];
  return out;
}

}  // namespace

P2pFit fit_p2p_kernel(const std::vector<P2pFitPoint>& points, double launch_us) {
  std::vector<std::array<double, 2>> ll_rows;
  std::vector<std::array<double, 3>> simple_rows;
  std::vector<double> ll_y, ll_t, simple_y, simple_t;
  for (const P2pFitPoint& p : points) {
    if (p.time_us <= launch_us) throw std::invalid_argument("a p2p kernel fit needs times above the launch");
    if (p.ll) {
      ll_rows.push_back({p.batches, p.batches * p.send_bytes});
      ll_y.push_back(p.time_us - launch_us);
      ll_t.push_back(p.time_us);
    } else {
      simple_rows.push_back({p.batches, p.batches * p.send_bytes, p.batches * p.drain_bytes});
      simple_y.push_back(p.time_us - launch_us);
      simple_t.push_back(p.time_us);
    }
  }
  if (ll_rows.size() < 2 || simple_rows.size() < 3) {
    throw std::invalid_argument("a p2p kernel fit needs at least two sizes that run LL and three that run Simple");
  }
  // Unknowns: fixed costs in us, inverse rates in us per byte.
  const std::array<double, 2> ll = solve<2>(ll_rows, ll_y, ll_t);
  const std::array<double, 3> simple = solve<3>(simple_rows, simple_y, simple_t);
  if (ll[1] <= 0 || simple[1] <= 0 || simple[2] <= 0) throw std::invalid_argument("a p2p kernel fit found a rate that is not positive");
  P2pFit f;
  f.ll_batch_us = ll[0];
  f.ll_channel_GBps = 1e-3 / ll[1];
  f.batch_us = simple[0];
  f.channel_GBps = 1e-3 / simple[1];
  f.drain_GBps = 1e-3 / simple[2];
  std::vector<double> measured, fitted;
  for (const P2pFitPoint& p : points) {
    measured.push_back(p.time_us);
    fitted.push_back(p.ll ? launch_us + p.batches * (f.ll_batch_us + p.send_bytes * ll[1])
                          : launch_us + p.batches * (f.batch_us + p.send_bytes * simple[1] + p.drain_bytes * simple[2]));
  }
  f.residuals = fit_residuals(measured, fitted);
  return f;
}

}  // namespace fabricsim
