#pragma once
// Pending events, ordered by (time, sequence): equal times run in the order they were
// scheduled, so every run is deterministic.
//
// A radix heap over event times, with 4-bit digits. A discrete-event simulation only
// ever schedules at or after the last event taken out, which is exactly the monotone
// case radix heaps serve. An entry sits in the bucket named by the highest hex digit in
// which its time differs from the current time and by its own value of that digit; when
// the lowest bucket is emptied into lower ones, each entry drops at least one digit, so
// it moves about log16(time spread / event spacing) times in its life: insert O(1), pop
// amortized O(log16 spread). Events at the current time form a batch in sequence order
// (a settled bucket's equal-time entries are sorted once; later ones arrive in order),
// so equal times cost a sort, not a radix pass over 16 digits of sequence numbers:
// fabrics of equal links run in lock-step, and thousands of events share each time.
// Cancel is O(1) and lazy, as in ns-3: a handler keeps the sequence number of its one
// live entry (0: none); cancelling or rescheduling forgets that number, and an entry
// whose number its handler no longer holds is dropped when it reaches the front. So
// moving entries between buckets never writes to the handlers, which at scale are cold.
// A handler has at most one pending event (htsim's rule): components reschedule
// themselves rather than piling up events.
#include <array>
#include <cstdint>
#include <vector>

#include "sim/time.h"

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

  bool scheduled() const { return seq_ != 0; }
  Time event_time() const { return time_; }

 private:
  friend class EventQueue;
  Time time_ = 0;
  std::uint64_t seq_ = 0;  // the sequence number of its live entry; 0 when not queued
};

class EventQueue {
 public:
  EventQueue() = default;
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  // Schedules `h` at `at`; if `h` is already pending, moves it. Either way it gets a
  // fresh sequence number, so it runs after events already scheduled for the same time.
  void schedule(EventHandler& h, Time at);
  // Removes `h`'s pending event, if any. O(1).
  void cancel(EventHandler& h);
  // Removes and returns the earliest event's handler; its time is h->event_time().
  EventHandler* pop();
  // Time of the earliest event; the queue must not be empty.
  Time next_time();

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
    std::uint64_t seq;
    EventHandler* handler;
  };
  // One bucket per (hex digit of the time, value of that digit).
  static constexpr int kDigitBits = 4;
  static constexpr int kValues = 1 << kDigitBits;
  static constexpr int kDigits = 64 / kDigitBits;
  static constexpr int kBuckets = kDigits * kValues;
  static constexpr int kWords = kBuckets / 64;

  int bucket_of(Time t) const;
  void insert(const Entry& e);
  void put(const Entry& e);
  void settle();  // makes batch_ hold the events at the earliest pending time
  void rebase(Time new_now);
  bool live(const Entry& e) const { return e.handler->seq_ == e.seq; }

  std::array<std::vector<Entry>, kBuckets> buckets_;
  std::array<std::uint64_t, kWords> occupied_{};  // bit b set: buckets_[b] non-empty
  std::vector<Entry> batch_;                      // entries at time now_, by sequence
  std::size_t batch_head_ = 0;                    // next of batch_ to pop
  Time now_ = 0;                                  // no pending entry is earlier
  std::uint64_t next_seq_ = 1;
  std::size_t size_ = 0;
  std::size_t forgotten_ = 0;  // entries still held whose handler moved on
};

}  // namespace fabricsim
