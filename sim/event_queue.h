#pragma once
// Pending events, ordered by (time, sequence): equal times run in the order they were
// scheduled, so every run is deterministic.
//
// A radix heap over the 128-bit key (time, sequence), with 4-bit digits. A discrete-
// event simulation only ever schedules at or after the last event taken out, which is
// exactly the monotone case radix heaps serve. An entry sits in the bucket named by the
// highest hex digit in which its key differs from the last minimum and by its own value
// of that digit; when the lowest bucket is emptied into lower ones, each entry drops at
// least one digit, so it moves about log16(time spread / event spacing) times in its
// life: insert O(1), pop amortized O(log16 spread). (Binary digits moved each entry ten
// times at 100k pending events; hex digits, three to four.) Each
// handler keeps its own (bucket, slot), as OMNeT++ handlers keep their heap index, so
// cancel and reschedule are O(1) with no search. A handler has at most one pending event
// (htsim's rule): components reschedule themselves rather than piling up events.
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

  bool scheduled() const { return bucket_ != kNotQueued; }
  Time event_time() const { return time_; }

 private:
  friend class EventQueue;
  static constexpr std::uint16_t kNotQueued = 0xffff;
  Time time_ = 0;
  std::uint32_t slot_ = 0;
  std::uint16_t bucket_ = kNotQueued;
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

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

 private:
  struct Entry {
    Time time;
    std::uint64_t seq;
    EventHandler* handler;
  };
  // Bucket 0: the key equal to the last minimum. Then 16 per hex digit of the key, the
  // 16 digits of the sequence first and the 16 of the time above them.
  static constexpr int kDigitBits = 4;
  static constexpr int kValues = 1 << kDigitBits;
  static constexpr int kDigitsPerWord = 64 / kDigitBits;
  static constexpr int kBuckets = 1 + 2 * kDigitsPerWord * kValues;
  static constexpr int kWords = (kBuckets + 63) / 64;
  static constexpr int kSummaryWords = (kWords + 63) / 64;

  static bool less(const Entry& a, const Entry& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  int bucket_of(const Entry& e) const;
  void insert(const Entry& e);
  void put(int bucket, const Entry& e);
  void take_out(int bucket, std::uint32_t slot);
  void settle_minimum();  // makes bucket 0 hold the earliest entry
  void rebase(const Entry& new_last);

  std::array<std::vector<Entry>, kBuckets> buckets_;
  std::array<std::uint64_t, kWords> occupied_{};  // bit b set: buckets_[b] non-empty
  std::array<std::uint64_t, kSummaryWords> summary_{};  // bit w set: occupied_[w] != 0
  void mark(int bucket) {
    occupied_[bucket >> 6] |= 1ull << (bucket & 63);
    summary_[bucket >> 12] |= 1ull << ((bucket >> 6) & 63);
  }
  void unmark(int bucket) {
    if ((occupied_[bucket >> 6] &= ~(1ull << (bucket & 63))) == 0) summary_[bucket >> 12] &= ~(1ull << ((bucket >> 6) & 63));
  }
  int first_occupied() const;
  Entry last_{0, 0, nullptr};                // the last minimum taken: no key below it is pending
  std::uint64_t next_seq_ = 1;
  std::size_t size_ = 0;
};

}  // namespace fabricsim
