#pragma once
// Pending events, ordered by (time, round, order key, sequence). Equal times run in
// rounds: an event scheduled for a later time is in round 0 of its time; one scheduled
// for the time being run joins the round after the one running (VHDL's delta cycles).
// Within a round, events run by their handler's order key, a number the model gives
// each component when it is built, and only then by when they were scheduled. So the
// order at one instant depends on which components are due, not on which was scheduled
// first: a run split over partitions (each with its own queue) runs every partition's
// events in the order a single queue would, and results do not depend on the split.
//
// A radix heap over event times, with 4-bit digits. A discrete-event simulation only
// ever schedules at or after the last event taken out, which is exactly the monotone
// case radix heaps serve. An entry sits in the bucket named by the highest hex digit in
// which its time differs from the current time and by its own value of that digit; when
// the lowest bucket is emptied into lower ones, each entry drops at least one digit, so
// it moves about log16(time spread / event spacing) times in its life: insert O(1), pop
// amortized O(log16 spread). Each bucket keeps its earliest time, so finding the next
// time reads no bucket. Digits are 4 bits: wider ones keep more buckets' allocations
// alive (docs/performance.md).
// Entries a common delay ahead (a port's serialization time, a link's latency) wait in a
// FIFO per delay instead; the next time is the earlier of the heap's least bucket and the
// FIFOs' earliest head. The heap's digits are taken against the time of the last entry it
// gave up, which the FIFOs may have moved past: that keeps its buckets in order.
// Events at the current time form a batch (a settled
// bucket's equal-time entries, sorted once by order key; those scheduled at the current
// time while it runs gather for the next round and are sorted when it starts), so equal
// times cost a sort, not a radix pass over 16 more digits: fabrics of equal links run in
// lock-step, and many events share each time.
// Cancel is O(1) and lazy, as in ns-3: a handler keeps the sequence number of its one
// live entry (0: none); cancelling or rescheduling forgets that number, and an entry
// whose number its handler no longer holds is dropped when it reaches the front. So
// moving entries between buckets never writes to the handlers, which at scale are cold.
// A handler has at most one pending event (htsim's rule): components reschedule
// themselves rather than piling up events.
#include <array>
#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdint>
#include <vector>

#include "sim/core/ring_buffer.h"
#include "sim/core/time.h"

namespace fabricsim {

class EventHandler {
 public:
  EventHandler() = default;
  EventHandler(const EventHandler&) = delete;
  EventHandler& operator=(const EventHandler&) = delete;
  virtual ~EventHandler() = default;
  // Called when the handler's event comes due; the simulator's clock reads its time.
  virtual void on_event() = 0;
  // Asks the processor to load what on_event() will touch first (the packet it will
  // hand on): called an event or two ahead, so memory latency overlaps other work.
  virtual void prefetch() const {}
  // Later stages of the same pipeline, each an event or more after the one before, so
  // each reads only lines the stage before asked for: what they point to (a link's
  // arriving packet's route and egress port at the far end).
  virtual void prefetch_next() const {}
  virtual void prefetch_last() const {}

  bool scheduled() const { return seq_ != 0; }
  Time event_time() const { return time_; }

  // Where it runs among events of its time and round. Components get distinct keys from
  // the network that builds them (the same keys however the run is split); handlers
  // without one run last, in the order they were scheduled.
  static constexpr std::uint32_t kUnordered = UINT32_MAX;
  // Keys below this are monitors' (deadlock checks, samplers, the fault timeline): they
  // watch the run, and the run's end is the last event of anything else.
  static constexpr std::uint32_t kMonitorKeys = 16;
  void set_order(std::uint32_t key) { order_ = key; }
  std::uint32_t order() const { return order_; }

 private:
  friend class EventQueue;
  Time time_ = 0;
  std::uint32_t seq_ = 0;  // the sequence number of its live entry; 0 when not queued
  std::uint32_t order_ = kUnordered;
};

class EventQueue {
 public:
  EventQueue() = default;
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  // Schedules `h` at `at`; if `h` is already pending, moves it. Either way it gets a
  // fresh sequence number, so it runs after events already scheduled for the same time.
  // (Inline, with what it calls: it runs once per event.)
  void schedule(EventHandler& h, Time at) {
    assert(at >= 0);
    cancel(h);
    h.time_ = at;
    h.seq_ = next_seq();
    insert({at, &h, h.order_, h.seq_});
  }
  // Removes `h`'s pending event, if any. O(1).
  void cancel(EventHandler& h) {
    if (h.seq_ != 0) forget(h);
  }
  // Removes and returns the earliest event's handler; its time is h->event_time().
  EventHandler* pop();
  // The same, right after due_by() said yes (nothing scheduled since): skips settling.
  EventHandler* pop_due() {
    const Entry& e = batch_[batch_head_++];
    e.handler->seq_ = 0;
    --size_;
    running_now_ = true;
    return e.handler;
  }
  // Time of the earliest event; the queue must not be empty.
  Time next_time();
  // Whether an event is due at or before `until`. When none is, nothing moves: events
  // may still be scheduled anywhere after the last one popped (a partition's inbox is
  // emptied into its queue between windows).
  bool due_by(Time until) {
    // Most calls find the batch's head live and sorted: no call into settle().
    if (!batch_dirty_ && batch_head_ < batch_.size() && live(batch_[batch_head_])) return now_ <= until;
    return settle(until);
  }
  // No live event is earlier than this (kTimeMax when empty). Nothing moves.
  Time lower_bound_time();

  // The handler k places behind the front among events at the current time, if known
  // without settling (for prefetching only: it may be one already forgotten).
  EventHandler* peek(std::size_t k) const {
    return batch_head_ + k < batch_.size() ? batch_[batch_head_ + k].handler : nullptr;
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }  // live events (forgotten entries not counted)

 private:
  struct Entry {
    Time time;
    EventHandler* handler;
    std::uint32_t order;  // the handler's order key
    std::uint32_t seq;    // liveness (the handler's seq_) and the last tie-break
  };
  // (order, seq) as one number; a function object, so the sorts inline the comparison.
  struct Before {
    static std::uint64_t key(const Entry& e) { return (std::uint64_t{e.order} << 32) | e.seq; }
    bool operator()(const Entry& x, const Entry& y) const { return key(x) < key(y); }
  };
  static constexpr Before before{};
  // One bucket per (hex digit of the time, value of that digit).
  static constexpr int kDigitBits = 4;
  static constexpr int kValues = 1 << kDigitBits;
  static constexpr int kDigits = 64 / kDigitBits;
  static constexpr int kBuckets = kDigits * kValues;
  static constexpr int kWords = kBuckets / 64;

  // Sorts a new round, batch_, by (order, seq). Rounds of 32 or more (a fabric's links
  // in lock-step: at k=32, 80% of events are in rounds of 32 to 16,000) go by radix on
  // the order key, whose span is the component count: std::sort's comparisons there
  // mispredict about half the time. Rounds of two to four (most of k=8's) by a sorting
  // network that selects rather than branches; the rest by insertion.
  // Equal keys (the entries a handler left behind, and handlers without one) then go by
  // sequence.
  void sort_round();
  static void insertion_sort(Entry* a, std::size_t n);  // by (order, seq)
  static void sort_few(Entry* a, std::size_t n);        // the same for n <= 4, without branches
  // Makes batch_ hold the next round of events, if their time is at or before `limit`;
  // false (and nothing moved) when the earliest pending event is later.
  bool settle(Time limit = kTimeMax);

  int bucket_of(Time t) const {
    // The highest hex digit in which t differs from heap_base_, and t's own value of it.
    const auto diff = static_cast<std::uint64_t>(t ^ heap_base_);
    const int digit = (63 - std::countl_zero(diff)) / kDigitBits;
    const int value = static_cast<int>((static_cast<std::uint64_t>(t) >> (digit * kDigitBits)) & (kValues - 1));
    return digit * kValues + value;
  }
  void put(const Entry& e) {
    const auto b = static_cast<std::size_t>(bucket_of(e.time));
    std::vector<Entry>& bucket = buckets_[b];
    bucket_min_[b] = std::min(bucket_min_[b], e.time);  // (kTimeMax while empty: no branch)
    bucket.push_back(e);
    occupied_[b >> 6] |= 1ull << (b & 63);
  }
  void insert(const Entry& e) {
    // Earlier than now only when a caller moved past a stop time by hand: rare, so an
    // O(n) rebuild is fine.
    if (e.time < now_) rebase(e.time);
    if (e.time == now_) {
      if (running_now_) {
        next_round_.push_back(e);
      } else {
        batch_.push_back(e);  // round 0 of a time not yet begun: sorted before the first pop
        batch_dirty_ = true;
      }
    } else if (e.time == kTimeMax) [[unlikely]] {
      put(e);  // (an empty FIFO's head reads kTimeMax: the end of time waits in the heap)
    } else {
      // The FIFO for this delay, if it is free or holds the same delay; else the heap.
      const Time delay = e.time - now_;
      const int f = fifo_of(delay);
      DelayFifo& q = fifos_[static_cast<std::size_t>(f)];
      if (fifo_head_[static_cast<std::size_t>(f)] == kTimeMax) {  // free
        q.delay = delay;
        q.entries.push_back(e);
        set_fifo_head(f, e.time);
      } else if (q.delay == delay) {
        q.entries.push_back(e);
        // A busy FIFO holds a latency's worth of entries (MBs at k=32), so the slots it
        // writes next left the caches long ago: ask for them six lines ahead, for writing.
        __builtin_prefetch(&q.entries.slot_after_back(kFifoPrefetchAhead), 1);
      } else {
        put(e);
      }
    }
    ++size_;
  }
  static int fifo_of(Time delay) {
    return static_cast<int>((static_cast<std::uint64_t>(delay) * 0x9E3779B97F4A7C15ull) >> (64 - kFifoBits));
  }
  std::uint32_t next_seq() {
    const std::uint32_t s = next_seq_++;
    if (next_seq_ == 0) next_seq_ = 1;  // 0 means "not queued"; wrapping only breaks ties
    return s;
  }
  void forget(EventHandler& h);  // cancel's work when h has an entry
  void rebase(Time new_now);
  bool live(const Entry& e) const { return e.handler->seq_ == e.seq; }

  // Entries scheduled a given delay after the time running arrive in time order, since
  // that time never goes back: a FIFO per delay keeps them sorted for free. Most events
  // are a port's serialization time or a link's latency after the one that schedules
  // them, so few delays cover most entries, and those skip the radix heap's moves (down
  // a digit at a time, each move a branch no predictor learns). The FIFOs are
  // found by the delay's hash; an entry whose FIFO holds another delay goes to the heap.
  struct DelayFifo {
    Time delay = 0;
    RingBuffer<Entry, 1> entries;
  };
  static constexpr int kFifoBits = 4;
  static constexpr std::size_t kFifoPrefetchAhead = 16;  // entries: six lines
  std::array<DelayFifo, 1u << kFifoBits> fifos_;
  // The FIFOs' heads' times (kTimeMax: empty) under a winner tree: node n (1 to 15) holds
  // the one of its two children's FIFOs with the earlier head, leaf 16 + f holds f. The
  // earliest head is read at the root; a head that moves costs four selects.
  static constexpr std::size_t kFifos = std::size_t{1} << kFifoBits;
  std::array<Time, kFifos> fifo_head_ = [] {
    std::array<Time, kFifos> a{};
    a.fill(kTimeMax);
    return a;
  }();
  std::array<std::uint8_t, 2 * kFifos> fifo_winner_ = [] {
    std::array<std::uint8_t, 2 * kFifos> w{};
    for (std::size_t f = 0; f < kFifos; ++f) w[kFifos + f] = static_cast<std::uint8_t>(f);
    // Every head is kTimeMax: each node's leftmost FIFO wins. (A node's winner must be
    // one of its own FIFOs, or an update below it would compare with a stranger.)
    for (std::size_t n = kFifos - 1; n >= 1; --n) w[n] = w[2 * n];
    return w;
  }();
  void set_fifo_head(int f, Time t) {
    fifo_head_[static_cast<std::size_t>(f)] = t;
    for (std::size_t n = (kFifos + static_cast<std::size_t>(f)) >> 1; n >= 1; n >>= 1) {
      const std::uint8_t a = fifo_winner_[2 * n];
      const std::uint8_t b = fifo_winner_[2 * n + 1];
      // (Arithmetic, not a conditional, which compilers turn into a branch here.)
      const auto take_b = static_cast<std::uint8_t>(-static_cast<int>(fifo_head_[b] < fifo_head_[a]));
      fifo_winner_[n] = static_cast<std::uint8_t>(a ^ ((a ^ b) & take_b));
    }
  }
  Time earliest_fifo_head() const { return fifo_head_[fifo_winner_[1]]; }
  std::array<std::vector<Entry>, kBuckets> buckets_;
  // The earliest time in each bucket; kTimeMax in an empty one.
  std::array<Time, kBuckets> bucket_min_ = [] {
    std::array<Time, kBuckets> a{};
    a.fill(kTimeMax);
    return a;
  }();
  std::array<std::uint64_t, kWords> occupied_{};  // bit b set: buckets_[b] non-empty
  int first_occupied() const {  // the lowest non-empty bucket; -1 if none (4 words to look at)
    for (int w = 0; w < kWords; ++w) {
      if (occupied_[static_cast<std::size_t>(w)] != 0) return w * 64 + std::countr_zero(occupied_[static_cast<std::size_t>(w)]);
    }
    return -1;
  }
  std::vector<Entry> batch_;                      // entries at time now_ of the round running, in order
  std::size_t batch_head_ = 0;                    // next of batch_ to pop
  std::vector<Entry> next_round_;                 // entries scheduled at now_ since its round began
  std::vector<Entry> sort_scratch_;               // sort_round's other buffer
  static constexpr int kMaxDigitBits = 11;
  static constexpr int kMaxPasses = 3;
  std::array<std::array<std::uint32_t, 1u << kMaxDigitBits>, kMaxPasses> radix_counts_;  // sort_round's
  bool running_now_ = false;                      // an event at now_ has been popped
  bool batch_dirty_ = false;                      // batch_ gained entries since it was sorted
  Time now_ = 0;                                  // no pending entry is earlier
  Time heap_base_ = 0;                            // the heap's last minimum given up (<= now_)
  std::uint32_t next_seq_ = 1;
  std::size_t size_ = 0;
  std::size_t forgotten_ = 0;  // entries still held whose handler moved on
};

}  // namespace fabricsim
