#pragma once
// Student's t distribution, for prediction intervals whose spread is itself estimated
// from few tables: its quantiles are wider than the normal's by as much as the estimate
// is uncertain (few degrees of freedom), and tend to the normal's as they grow.

namespace fabricsim {

// P(T <= t) for T with `degrees_of_freedom` > 0 (any real value: a Welch-Satterthwaite
// count need not be whole).
double student_t_cdf(double t, double degrees_of_freedom);

// The t with P(T <= t) = p, for 0 < p < 1; +-infinity outside. Degrees of freedom of 1e7
// or more (or infinite) give the normal's quantile.
double student_t_quantile(double p, double degrees_of_freedom);

}  // namespace fabricsim
