#pragma once
#include <cstdint>

#include "sim/core/time.h"

namespace fabricsim {

// How a link keeps from overrunning the far end's buffer.
enum class FlowControl : std::uint8_t {
  kNone,    // Ethernet: the far end drops when full, unless PFC (network.pfc) pauses us
  kCredit,  // InfiniBand, PCIe, NVLink: send only into buffer the far end granted
};

// One kind of cable: rate per direction, propagation delay, and flow control.
struct LinkSpec {
  Bandwidth bandwidth = Bandwidth::gbps(400);
  Time latency = ns(500);
  FlowControl flow_control = FlowControl::kNone;
  // Credit-based: buffer the far end grants per class (virtual lane), in bytes. 0: enough
  // for line rate, the credit loop's bandwidth-delay product plus eight packets (four
  // for packets in serialization, four for credit updates sent in batches of four).
  std::int64_t credit_bytes = 0;
};

}  // namespace fabricsim
