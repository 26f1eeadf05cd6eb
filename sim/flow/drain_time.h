#pragma once
// How long a flow takes to drain its bytes at its rate, shared by the flow model's files.
#include <cmath>

#include "sim/core/time.h"

namespace fabricsim {

// Picoseconds to drain `bytes` at `rate` (bytes/ps), rounded up; a quotient within a
// millionth of a picosecond of a whole one is taken as that one, so that S / B is exact
// where the closed form is.
inline Time drain_time(double bytes, double rate) {
  if (bytes <= 0) return 0;
  const double t = bytes / rate;
  if (t >= 9e18) return kTimeMax / 4;
  return static_cast<Time>(std::ceil(t - 1e-6));
}

}  // namespace fabricsim
