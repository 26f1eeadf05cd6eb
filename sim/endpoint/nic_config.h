#pragma once
// An endpoint's transport settings, shared by its parts (sim/endpoint/nic.h).
#include <cstdint>
#include <memory>

#include "sim/core/time.h"
#include "sim/endpoint/congestion_control.h"

namespace fabricsim {

struct NicConfig {
  std::uint32_t mtu = 4096;           // payload bytes per packet
  std::uint32_t header_bytes = 64;    // added to every data packet on the wire
  std::uint32_t ack_bytes = 64;       // an acknowledgement's (NACK's, CNP's) size on the wire
  std::uint32_t ack_interval = 1;     // acknowledge every this many in-order data packets
  std::uint8_t ack_traffic_class = 0;
  bool nack_on_gap = true;            // false where paths reorder (spray, adaptive)
  Time retransmit_timeout = ms(10);
  Time nack_interval = us(10);        // at most one NACK per gap per interval
  bool ecn_capable = false;
  // Shared by every NIC (settings only; each flow's state is in its message). Null:
  // rate-less, as RoCE with PFC alone.
  std::shared_ptr<const CongestionControl> congestion_control;
  Time network_rtt = 0;  // the fabric's largest base round trip, for congestion control
  // An RDMA NIC reads a GPU's payload ahead of sending it by at most this much per queue
  // pair (its outstanding DMA reads and what they brought in, not yet sent), in reads of
  // a quarter of it.
  std::uint32_t fetch_window_bytes = 256 * 1024;

  bool operator==(const NicConfig&) const = default;
};

// Packets needed for a message of `bytes`: ceil(bytes / mtu), and one for an empty one.
constexpr std::uint32_t packets_for(std::int64_t bytes, std::uint32_t mtu) {
  return bytes <= 0 ? 1u : static_cast<std::uint32_t>((bytes + mtu - 1) / mtu);
}

}  // namespace fabricsim
