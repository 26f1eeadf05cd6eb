#pragma once
// One direction of a cable: a fixed propagation delay. Packets leave in the order they
// entered, so the in-flight set is a FIFO and the link needs one pending event (for
// the packet at its head) however many packets are on the wire.
#include "sim/event_queue.h"
#include "sim/packet_sink.h"
#include "sim/ring_buffer.h"

namespace fabricsim {

class Simulator;

class Link final : public EventHandler {
 public:
  Link(Simulator& sim, Time latency, PacketSink& far_end, PortIndex far_port)
      : far_end_(&far_end), sim_(&sim), latency_(latency), far_port_(far_port) {}

  // The last bit of `p` has just left the sender; it reaches the far end after latency.
  void transmit(Packet* p);
  void on_event() override;
  void prefetch() const override {
    if (!in_flight_.empty()) __builtin_prefetch(in_flight_.front().packet);
    __builtin_prefetch(far_end_);
  }

  Time latency() const { return latency_; }

 private:
  struct InFlight {
    Time arrives;
    Packet* packet;
  };
  RingBuffer<InFlight, 4> in_flight_;
  PacketSink* far_end_;
  Simulator* sim_;
  Time latency_;
  PortIndex far_port_;
};

}  // namespace fabricsim
