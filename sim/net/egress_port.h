#pragma once
// The transmit side of a port: per-traffic-class FIFO queues counted in bytes with tail
// drop, strict priority between classes (higher class first), PFC pause per class, ECN
// marking, and a transmit state machine idle -> transmitting -> idle with one pending
// event while busy. A class paused by PFC starts no new packet; the one on the wire
// finishes. On a credit-based link (InfiniBand, PCIe, NVLink) a class starts a packet
// only while the far end has granted buffer for it (credits, in bytes, per class as per
// virtual lane); the far end returns them as it frees that buffer, so the link never
// drops and needs no PAUSE.
#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "sim/core/counter_fields.h"
#include "sim/net/ecn_marker.h"
#include "sim/core/event_queue.h"
#include "sim/net/link.h"
#include "sim/net/packet_sink.h"
#include "sim/core/slot_blocks.h"
#include "sim/core/time.h"

namespace fabricsim {

class Simulator;

inline constexpr int kMaxTrafficClasses = 8;

struct ClassCounters {
  std::uint64_t bytes_sent = 0;
  std::uint64_t packets_sent = 0;
  std::uint64_t drops = 0;
  std::uint64_t ecn_marks = 0;
  std::uint64_t pauses_sent = 0;      // PFC XOFF frames for this class sent from this port's side (a port's: upstream)
  std::uint64_t pauses_received = 0;  // XOFF frames that paused this class
  Time paused_time = 0;
  Time credit_wait_time = 0;  // credit-based links: time a ready packet waited for credits
  std::int64_t max_queue_bytes = 0;   // bytes waiting, not counting the one in service

  // In results order (a link's and each of its classes').
  template <typename F, typename... C>
  static void for_each_field(F&& f, C&... c) {
    f(CounterField{"bytes"}, c.bytes_sent...);
    f(CounterField{"packets"}, c.packets_sent...);
    f(CounterField{"drops"}, c.drops...);
    f(CounterField{"ecn_marks"}, c.ecn_marks...);
    f(CounterField{"pauses_sent"}, c.pauses_sent...);
    f(CounterField{"pauses_received"}, c.pauses_received...);
    f(CounterField{"paused_time_ps", false, true}, c.paused_time...);
    f(CounterField{"credit_wait_time_ps", false, true, true}, c.credit_wait_time...);
    f(CounterField{"max_queue_bytes", true}, c.max_queue_bytes...);
  }
};

struct PortCounters {
  // Over all classes (add_class_counters), but for max_queue_bytes: the port's own
  // high-water mark, all classes' bytes together.
  ClassCounters total;
  std::uint64_t dropped_bytes = 0;
  Time busy_time = 0;
  std::array<ClassCounters, kMaxTrafficClasses> per_class{};
};

// What a leaving packet held where it was queued: the port copies it from the packet on
// arrival, so the departure need not load the packet again (long queued, so cold).
struct Departure {
  std::uint32_t wire_bytes;
  std::uint16_t ingress_port;
  std::uint8_t ingress_class;
  std::uint8_t traffic_class;
};

// Told when a packet leaves, e.g. so a switch frees its buffer.
class PortObserver {
 public:
  virtual ~PortObserver() = default;
  virtual void on_departure(const Departure& d) = 0;
  // Prefetch stages for the departure `d` (see PacketSink::prefetch_arrival).
  virtual void prefetch_departure(const Departure& d) const { (void)d; }
};

// Aligned to a cache line, with what one packet's enqueue and departure touch in its
// first four lines (class 0's queue and counters inline), all at fixed offsets from the
// port: at scale every port is cold, and the loads then go out together instead of one
// after another through pointers.
class alignas(64) EgressPort final : public EventHandler {
 public:
  static constexpr std::int64_t kUnlimited = INT64_MAX;

  // `queue_capacity_bytes` applies to each class queue separately.
  EgressPort(Simulator& sim, Bandwidth bandwidth, int traffic_classes, std::int64_t queue_capacity_bytes);

  void attach(Link& link) { link_ = &link; }
  void set_source(PacketSource* source, PortIndex index_at_source) {
    source_ = source;
    has_source_ = source != nullptr;
    source_port_ = index_at_source;
  }
  void set_observer(PortObserver* observer) { observer_ = observer; }
  // Switch ports: stamp in-band telemetry on each data packet as it leaves.
  void set_telemetry(bool on) { telemetry_ = on; }
  void set_ecn(const EcnConfig* ecn, Rng* rng) {
    ecn_ = ecn != nullptr && ecn->enabled ? ecn : nullptr;
    ecn_on_ = ecn_ != nullptr;
    rng_ = rng;
  }

  // Queues `p` for transmission or drops it (tail drop) when its class queue is full.
  // Returns false on a drop; the packet is then back in the pool. A `granted` packet
  // (it came over a credit-based link, so its buffer was reserved) is never dropped.
  bool enqueue(Packet* p, bool granted = false);
  // Counts `p` as dropped on its way to this port (refused by a buffer upstream of the
  // queue) and frees it.
  void count_drop(Packet* p);
  // The source has something new: start sending if idle.
  void wake() {
    if (!busy()) start_next();
  }
  // Puts a control frame (PFC) on the wire now, ahead of everything: it reaches the far
  // end after the link's latency.
  void send_control(Packet* p);
  // PFC from the far end: stop (or resume) starting packets of `traffic_class`.
  void set_paused(std::uint8_t traffic_class, bool paused);
  void count_pause_sent(std::uint8_t traffic_class) { ++counters_of(traffic_class).pauses_sent; }
  // Makes the link credit-based: each end grants the other `bytes` of buffer per class,
  // and returns what it frees once `return_batch` bytes are owed (one credit update per
  // batch, not per packet). A batch of at most `bytes` minus the largest packet cannot
  // deadlock: a sender short of credits has that much owed to it or in flight.
  void set_credits(std::int64_t bytes, std::int64_t return_batch);
  bool credit_based() const { return credit_based_; }
  std::int64_t credit_bytes() const { return credit_bytes_; }  // granted per class by the far end
  // A credit update arrived: the far end freed `bytes` of `traffic_class`'s buffer.
  void credits_returned(std::uint8_t traffic_class, std::int64_t bytes);
  // This end freed `bytes` of `traffic_class`'s buffer that the far end had used:
  // owed back, sent in a credit update once a batch is due.
  void owe_credits(std::uint8_t traffic_class, std::int64_t bytes);
  // Whether a packet of `wire_bytes` in `traffic_class` may start now (PFC and credits).
  bool can_start(std::uint8_t traffic_class, std::int64_t wire_bytes) const {
    return !paused(traffic_class) && (!credit_based_ || credit_[traffic_class].available >= wire_bytes);
  }
  // A source (endpoint) had a packet of `traffic_class` ready but no credits for it.
  void note_credit_wait(std::uint8_t traffic_class);

  // The link has failed: what this port sends from now on is lost (its queue drains at
  // line rate into the void, so upstream buffers and credits are released as usual), and
  // it no longer waits for credits or PFC from the far end.
  void set_down();
  // The same, as seen from another process's copy (it runs nothing: only what the
  // results report, such as its flow control, follows).
  void mark_down() {
    down_ = true;
    credit_based_ = false;
    paused_mask_ = 0;
  }
  bool down() const { return down_; }

  void on_event() override;  // transmission of the packet in service has ended
  // The loop asked for the port's first two lines two stages before (see EventHandler).
  void prefetch() const override {
    __builtin_prefetch(&first_queue_);
    if (has_source_) __builtin_prefetch(&source_);
    __builtin_prefetch(link_);
    __builtin_prefetch(reinterpret_cast<const char*>(link_) + 64);  // its wire
    __builtin_prefetch(next_slot_);
    if (observer_ != nullptr) {
      const char* o = reinterpret_cast<const char*>(observer_);
      __builtin_prefetch(o);
      __builtin_prefetch(o + 64);
    }
  }
  // What enqueue() touches first (for the stage that knows a packet will come here).
  void prefetch_enqueue() const {
    __builtin_prefetch(this);
    __builtin_prefetch(reinterpret_cast<const char*>(this) + 64);
    __builtin_prefetch(&first_queue_);
  }
  void prefetch_next() const override {
    if (has_source_ && total_queued_bytes_ == 0) {
      // It will pull from its source (an endpoint): the source's first lines.
      const char* s = reinterpret_cast<const char*>(source_);
      for (int line = 0; line < 6; ++line) __builtin_prefetch(s + 64 * line);
    }
    if (link_ != nullptr) link_->prefetch_transmit();
    if (observer_ != nullptr && busy()) observer_->prefetch_departure(in_service_.departure);
  }
  void prefetch_last() const override {
    if (has_source_ && total_queued_bytes_ == 0) source_->prefetch_pull(source_port_);
  }

  bool busy() const { return in_service_.packet != kIdle; }
  bool paused(std::uint8_t traffic_class) const { return (paused_mask_ >> traffic_class) & 1u; }
  std::uint8_t paused_mask() const { return paused_mask_; }
  Bandwidth bandwidth() const { return bandwidth_; }
  std::int64_t queued_bytes() const { return total_queued_bytes_; }
  std::int64_t queued_bytes(int traffic_class) const { return queue(traffic_class).bytes; }
  int traffic_classes() const { return class_count_; }
  const EcnConfig* ecn() const { return ecn_on_ ? ecn_ : nullptr; }  // null: no marking
  // Counters, with paused time brought up to `now`.
  PortCounters counters_at(Time now) const;
  // A run split over processes: a process that did not run this port takes the counters
  // of the one that did (counters_at(end) there), for the results.
  void adopt_counters(const PortCounters& c);
  // Counters as of the last event (totals over classes worked out on request).
  PortCounters counters() const;
  std::uint64_t packets_sent() const {
    std::uint64_t n = sent_packets_0_;
    for (int c = 1; c < class_count_; ++c) n += counters_of(c).packets_sent;
    return n;
  }
  const Link* link() const { return link_; }

 private:
  // A queued packet with what its departure needs beside it: taking the next one to
  // send, and sending it, read the queue, not the packet (long queued, so likely out of
  // cache; the link hands it on unread, by its number in the packet pool, which is all
  // a link's wire holds).
  struct Queued {
    std::uint32_t packet = kIdle;  // its pool index
    Departure departure{};
  };
  static constexpr std::uint32_t kIdle = UINT32_MAX;  // in_service_.packet when idle
  static Queued queued(const Packet* p) {
    return {p->pool_index, {p->wire_bytes, p->ingress_port, p->ingress_class, p->traffic_class}};
  }
  static_assert(std::is_trivially_copyable_v<Queued> && std::is_trivially_destructible_v<Queued>);
  struct ClassQueue {
    std::int64_t bytes = 0;
    BlockFifo<Queued> packets;  // blocks from the simulator's SlotBlockPool
  };
  ClassQueue& queue(int c) { return c == 0 ? first_queue_ : more_queues_[static_cast<std::size_t>(c - 1)]; }
  const ClassQueue& queue(int c) const { return c == 0 ? first_queue_ : more_queues_[static_cast<std::size_t>(c - 1)]; }
  ClassCounters& counters_of(int c) { return c == 0 ? first_counters_ : more_counters_[static_cast<std::size_t>(c - 1)]; }
  const ClassCounters& counters_of(int c) const {
    return c == 0 ? first_counters_ : more_counters_[static_cast<std::size_t>(c - 1)];
  }
  void start_next();
  void roll_up(PortCounters& c) const;  // c.total from c.per_class
  void note_next_slot() { next_slot_ = first_queue_.packets.empty() ? nullptr : &first_queue_.packets.front(); }
  SlotBlockPool& slot_blocks();
  void begin_service(const Queued& q);
  void end_credit_wait(std::uint8_t traffic_class);
  void stamp(Packet* p);  // in-band telemetry
  void maybe_mark(Packet* p, std::int64_t queued_before);

  // Line 0 (after the vtable and the handler's queue fields) and line 1: what every
  // packet touches.
  Queued in_service_;  // packet kIdle: idle
  std::int64_t total_queued_bytes_ = 0;
  // Where class 0's next packet to send sits in its queue (null: empty), for prefetch():
  // that slot was written long ago, and loading it through the queue is two misses in a row.
  const Queued* next_slot_ = nullptr;
  Link* link_ = nullptr;
  Time service_time_ = 0;
  PortObserver* observer_ = nullptr;
  std::uint64_t sent_bytes_0_ = 0;  // class 0's bytes_sent (its ClassCounters' is unused)
  Simulator* sim_;
  Bandwidth bandwidth_;
  std::int64_t max_queue_bytes_ = 0;
  Time busy_time_ = 0;
  std::uint8_t paused_mask_ = 0;
  std::uint8_t class_count_ = 0;
  bool credit_based_ = false;  // here, not credit_.empty(): every packet asks, and this line is hot
  bool down_ = false;
  bool telemetry_ = false;
  bool has_source_ = false;    // source_ is set (switch ports never read it)
  bool ecn_on_ = false;        // ecn_ is set (the pointer itself is on a line only marking reads)
  // Line 2: class 0's queue and packet count. A port at a switch touches these three
  // lines only, and an endpoint's port line 3 as well, for its source: at k=32 the ports
  // are a quarter of what forwarding keeps in cache, and a fourth line each for counters
  // went to memory on every packet.
  alignas(64) ClassQueue first_queue_;
  std::int64_t capacity_;
  std::uint64_t sent_packets_0_ = 0;  // class 0's packets_sent
  alignas(64) PacketSource* source_ = nullptr;  // an endpoint's port pulls from it once its queue is empty
  PortIndex source_port_ = 0;
  const EcnConfig* ecn_ = nullptr;
  // Class 0's other counters. Its max_queue_bytes is kept only with more than one class:
  // with one, it is the port's max_queue_bytes_.
  ClassCounters first_counters_;
  // Classes 1 and up.
  std::vector<ClassQueue> more_queues_;
  std::vector<ClassCounters> more_counters_;
  Rng* rng_ = nullptr;
  std::uint64_t tx_bytes_ = 0;  // all classes (for telemetry)
  std::array<Time, kMaxTrafficClasses> paused_since_{};
  // Per class, empty unless credit-based: what the far end granted and not yet used, and
  // since when a ready packet has waited for more (-1: not waiting); together, so a
  // packet's start touches one line.
  struct ClassCredit {
    std::int64_t available = 0;
    Time wait_since = -1;
  };
  std::vector<ClassCredit> credit_;
  std::vector<std::int64_t> owed_;              // per class: freed, not yet returned
  std::int64_t return_batch_ = 0;
  std::int64_t credit_bytes_ = 0;
  std::uint64_t dropped_bytes_ = 0;  // (per class counters above; the port's totals are their sums)
};

}  // namespace fabricsim
