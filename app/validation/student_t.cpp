#include "app/validation/student_t.h"

#include <cmath>
#include <limits>

namespace fabricsim {
namespace {

// The continued fraction of the regularized incomplete beta function (its even and odd
// steps), evaluated by the modified Lentz method; converges fast for x < (a + 1) / (a + b + 2).
double incomplete_beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEpsilon = 1e-15;
  const auto guard = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
  double c = 1.0;
  double d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    double term = m * (b - m) * x / ((a - 1.0 + m2) * (a + m2));
    d = 1.0 / guard(1.0 + term * d);
    c = guard(1.0 + term / c);
    h *= d * c;
    term = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1.0 + m2));
    d = 1.0 / guard(1.0 + term * d);
    c = guard(1.0 + term / c);
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1.0) < kEpsilon) break;
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function.
double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1.0) / (a + b + 2.0)) return front * incomplete_beta_fraction(a, b, x) / a;
  return 1.0 - front * incomplete_beta_fraction(b, a, 1.0 - x) / b;
}

double normal_cdf(double t) { return 0.5 * std::erfc(-t / std::sqrt(2.0)); }

constexpr double kNormalDegrees = 1e7;

}  // namespace

double student_t_cdf(double t, double degrees_of_freedom) {
  if (std::isnan(t) || !(degrees_of_freedom > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (degrees_of_freedom >= kNormalDegrees) return normal_cdf(t);
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  // P(|T| > |t|) = I_{v / (v + t^2)}(v / 2, 1 / 2).
  const double v = degrees_of_freedom;
  const double tail = 0.5 * regularized_incomplete_beta(v / 2.0, 0.5, v / (v + t * t));
  return t >= 0 ? 1.0 - tail : tail;
}

double student_t_quantile(double p, double degrees_of_freedom) {
  if (std::isnan(p) || !(degrees_of_freedom > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  if (p < 0.5) return -student_t_quantile(1.0 - p, degrees_of_freedom);
  // Bracket, then bisect: the CDF is monotone, and a few dozen halvings reach double precision.
  double low = 0, high = 1;
  while (student_t_cdf(high, degrees_of_freedom) < p && high < 1e300) high *= 2;
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double mid = 0.5 * (low + high);
    (student_t_cdf(mid, degrees_of_freedom) < p ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

}  // namespace fabricsim
