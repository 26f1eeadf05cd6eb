#pragma once
// In-band network telemetry (INT) as HPCC uses it: each switch egress a data packet
// leaves through appends one record (queue length, bytes sent so far, time, line rate),
// and the receiver echoes the stack back in its acknowledgement. The stack is too big
// for the packet's cache line, so it lives beside it, in the pool, only when some
// congestion control asks for it.
#include <cstdint>

#include "sim/core/time.h"

namespace fabricsim {

struct IntHop {
  std::uint32_t queue_bytes;  // bytes waiting at the port when the packet left
  std::uint32_t tx_bytes;     // bytes the port had sent, mod 2^32 (differences are exact)
  std::uint32_t time_ns;      // when, mod 2^32 ns (differences are exact under 4.29 s)
  std::uint32_t rate_mbps;    // the port's line rate
};

struct IntStack {
  static constexpr int kMaxHops = 8;
  std::uint8_t hops = 0;
  IntHop hop[kMaxHops];

  void push(const IntHop& h) {
    if (hops < kMaxHops) hop[hops++] = h;
  }
};

}  // namespace fabricsim
