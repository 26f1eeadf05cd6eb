#pragma once
#include <cstdint>

#include "sim/core/packet.h"

namespace fabricsim {

using PortIndex = std::uint16_t;

// Anything a link can deliver to: a switch or a NIC. Takes ownership of the packet.
class PacketSink {
 public:
  virtual ~PacketSink() = default;
  virtual void receive(Packet* p, PortIndex in_port) = 0;
  // Prefetch stages for `p`, about to arrive on `in_port` (EventHandler::prefetch_next
  // and prefetch_last of the link bringing it): the first may read the sink's own first
  // lines, the second what the first asked for. `p` may be stale (a prefetch only).
  virtual void prefetch_arrival(const Packet& p, PortIndex in_port) const {
    (void)p;
    (void)in_port;
  }
  virtual void prefetch_arrival_more(const Packet& p, PortIndex in_port) const {
    (void)p;
    (void)in_port;
  }
};

// Where an egress port pulls its next packet from when its own queues are empty: a
// NIC generates data packets only when the wire is free, so a 1 GiB message is never
// a million queued packets. `port` says which of the source's ports is asking.
class PacketSource {
 public:
  virtual ~PacketSource() = default;
  virtual Packet* pull(PortIndex port) = 0;
  // The last prefetch stage before a pull on `port` (its first lines asked for already).
  virtual void prefetch_pull(PortIndex port) const { (void)port; }
};

}  // namespace fabricsim
