#pragma once
#include "sim/time.h"

namespace fabricsim {

// One kind of cable: rate per direction and propagation delay.
struct LinkSpec {
  Bandwidth bandwidth = Bandwidth::gbps(400);
  Time latency = ns(500);
};

}  // namespace fabricsim
