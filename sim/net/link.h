#pragma once
// One direction of a cable: a fixed propagation delay. Packets leave in the order they
// entered, so the in-flight set is a FIFO and the link needs one pending event (for
// the packet at its head) however many packets are on the wire.
// A link is the only door between partitions of a split run: a cut link lives in its
// receiving partition, and its sender writes packets into the sending partition's
// outbox (sim/parallel/cross_partition.h) instead of onto the wire; between windows the receiving
// partition puts them on the wire with the time they arrive. Its latency (at least
// 1 ns) is the run's lookahead.
#include <cstdint>
#include <memory>

#include "sim/parallel/cross_partition.h"
#include "sim/core/event_queue.h"
#include "sim/net/packet_sink.h"
#include "sim/core/ring_buffer.h"

namespace fabricsim {

class Simulator;

class alignas(64) Link final : public EventHandler {
 public:
  Link(Simulator& sim, Time latency, PacketSink& far_end, PortIndex far_port);

  // The last bit of packet `packet` (its pool index in this link's simulator) has just
  // left the sender; it reaches the far end after latency.
  void transmit(std::uint32_t packet);
  // The sending side of a cut link: the sender's simulator, and where its packets go
  // (the sending partition's outbox, for partition `to_partition`, where the link is cut
  // link number `index`). Kept apart, so an uncut link stays as small as it was.
  struct CutEnd {
    Simulator* sender;
    Outbox* outbox;
    std::uint32_t to_partition;
    std::uint32_t index;
  };
  void cut(const CutEnd& end);
  // The receiving side of a cut link: `p` (from this partition's pool) reaches the far
  // end at `arrives`.
  void accept(Time arrives, Packet* p);
  void on_event() override;
  // The loop asked for the link's two lines two stages before (see EventHandler): the
  // packet at the head of the wire, then the far end's lines, route and port for it.
  void prefetch() const override;
  // Where transmit() will write (for the port about to send on this link), when that is
  // not the inline wire the port's prefetch() asked for already. Not for a cut link: its
  // wire belongs to another partition (another thread's), and its sender writes to the
  // outbox instead.
  void prefetch_transmit() const {
    if (in_wide_ && !cut_) __builtin_prefetch(&wide_->ring.slot_after_back(0));
  }
  void prefetch_next() const override {
    if (const Packet* p = front_packet()) far_end_->prefetch_arrival(*p, far_port_);
  }
  void prefetch_last() const override {
    if (const Packet* p = front_packet()) far_end_->prefetch_arrival_more(*p, far_port_);
  }

  Time latency() const { return latency_; }

 private:
  // A packet on the wire: when it arrives, and its pool index. Inline, the arrival is
  // kept as its low 32 bits, which name it exactly as long as it lies within 2^32 ps
  // (4.29 ms) after now: it does on a link shorter than that, since everything on the
  // wire arrives within one latency. So eight packets (a 1 us link at 100G carries about
  // four and their acks) fit one line, and a link is two lines in all: at scale links are
  // a large share of what forwarding keeps in cache.
  struct Slot {
    std::uint32_t arrives_low;
    std::uint32_t packet;
  };
  static constexpr std::uint32_t kInline = 8;
  // More on the wire than that, a link of 4.29 ms or more, and a cut link use a ring on
  // the heap with whole times (kept once made, for the next burst).
  struct InFlight {
    Time arrives;
    std::uint32_t packet;
  };
  struct Wide {
    const CutEnd* cut = nullptr;
    RingBuffer<InFlight, 1> ring;
  };
  static Time widen(std::uint32_t arrives_low, Time now) {
    return now + static_cast<Time>(static_cast<std::uint32_t>(arrives_low - static_cast<std::uint32_t>(now)));
  }
  void push(Time arrives, std::uint32_t packet);
  void spill();  // the inline wire is full: move it to the heap ring
  bool pop_due(Time now, std::uint32_t& packet);
  const Packet* front_packet() const;

  // Line 0 (with the event's fields): what every packet reads; line 1: the wire.
  PacketSink* far_end_;
  Simulator* sim_;
  Time latency_;
  std::unique_ptr<Wide> wide_;
  PortIndex far_port_;
  std::uint8_t head_ = 0;   // the inline wire: first slot and count
  std::uint8_t count_ = 0;
  bool narrow_;             // arrivals fit the inline slots (latency under 2^32 ps, not cut)
  bool in_wide_;            // the wire is the heap ring now (always, unless narrow_)
  bool cut_ = false;
  alignas(64) Slot slots_[kInline];
};

}  // namespace fabricsim
