#pragma once
// One direction of a cable: a fixed propagation delay. Packets leave in the order they
// entered, so the in-flight set is a FIFO and the link needs one pending event (for
// the packet at its head) however many packets are on the wire.
// A link is the only door between partitions of a split run: a cut link lives in its
// receiving partition, and its sender writes packets into the sending partition's
// outbox (sim/cross_partition.h) instead of onto the wire; between windows the receiving
// partition puts them on the wire with the time they arrive. Its latency (at least
// 1 ns) is the run's lookahead.
#include "sim/cross_partition.h"
#include "sim/event_queue.h"
#include "sim/packet_sink.h"
#include "sim/ring_buffer.h"

namespace fabricsim {

class Simulator;

class alignas(64) Link final : public EventHandler {
 public:
  Link(Simulator& sim, Time latency, PacketSink& far_end, PortIndex far_port)
      : far_end_(&far_end), sim_(&sim), latency_(latency), far_port_(far_port) {}

  // The last bit of `p` has just left the sender; it reaches the far end after latency.
  void transmit(Packet* p);
  // The sending side of a cut link: the sender's simulator, and where its packets go
  // (the sending partition's outbox, for partition `to_partition`, where the link is cut
  // link number `index`). Kept apart, so an uncut link stays as small as it was.
  struct CutEnd {
    Simulator* sender;
    Outbox* outbox;
    std::uint32_t to_partition;
    std::uint32_t index;
  };
  void cut(const CutEnd& end) { cut_ = &end; }
  // The receiving side of a cut link: `p` (from this partition's pool) reaches the far
  // end at `arrives`.
  void accept(Time arrives, Packet* p);
  void on_event() override;
  // The loop asked for the link's lines two stages before (see EventHandler): the packet
  // at the head of the wire, then the far end's lines, route and port for it.
  void prefetch() const override {
    if (!in_flight_.empty()) __builtin_prefetch(in_flight_.front().packet);
    const char* end = reinterpret_cast<const char*>(far_end_);
    for (int line = 0; line < 6; ++line) __builtin_prefetch(end + 64 * line);
  }
  // Where transmit() will write (for the port about to send on this link). Not for a cut
  // link: its wire belongs to another partition (another thread's), and its sender
  // writes to the outbox instead.
  void prefetch_transmit() const {
    if (cut_ == nullptr) __builtin_prefetch(&in_flight_.back_slot());
  }
  void prefetch_next() const override {
    if (!in_flight_.empty()) far_end_->prefetch_arrival(*in_flight_.front().packet, far_port_);
  }
  void prefetch_last() const override {
    if (!in_flight_.empty()) far_end_->prefetch_arrival_more(*in_flight_.front().packet, far_port_);
  }

  Time latency() const { return latency_; }

 private:
  struct InFlight {
    Time arrives;
    Packet* packet;
  };
  // Line 0 (with the event's fields): what every packet reads; lines 1-3: the wire, up
  // to eight packets inline (a 1 us link at 100G carries about four and their acks).
  PacketSink* far_end_;
  Simulator* sim_;
  const CutEnd* cut_ = nullptr;  // null unless the link is cut
  Time latency_;
  PortIndex far_port_;
  alignas(64) RingBuffer<InFlight, 8> in_flight_;
};

}  // namespace fabricsim
