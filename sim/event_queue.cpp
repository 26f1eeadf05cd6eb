#include "sim/event_queue.h"

#include <bit>
#include <cassert>

namespace fabricsim {

int EventQueue::bucket_of(const Entry& e) const {
  // The highest hex digit in which the key differs from last_ (time digits rank above
  // sequence digits), and the key's own value of that digit.
  std::uint64_t diff, word;
  int base;
  if (e.time != last_.time) {
    diff = static_cast<std::uint64_t>(e.time ^ last_.time);
    word = static_cast<std::uint64_t>(e.time);
    base = kDigitsPerWord;
  } else {
    diff = e.seq ^ last_.seq;
    if (diff == 0) return 0;
    word = e.seq;
    base = 0;
  }
  const int digit = (63 - std::countl_zero(diff)) / kDigitBits;
  const int value = static_cast<int>((word >> (digit * kDigitBits)) & (kValues - 1));
  return 1 + (base + digit) * kValues + value;
}

void EventQueue::put(int bucket, const Entry& e) {
  auto& b = buckets_[bucket];
  e.handler->bucket_ = static_cast<std::uint16_t>(bucket);
  e.handler->slot_ = static_cast<std::uint32_t>(b.size());
  b.push_back(e);
  mark(bucket);
}

void EventQueue::take_out(int bucket, std::uint32_t slot) {
  auto& b = buckets_[bucket];
  if (slot + 1 != b.size()) {
    b[slot] = b.back();
    b[slot].handler->slot_ = slot;
  }
  b.pop_back();
  if (b.empty()) unmark(bucket);
}

void EventQueue::insert(const Entry& e) {
  // Only possible after the simulator peeked past a stop time and was then asked for an
  // earlier event: rare, so an O(n) rebuild is fine.
  if (less(e, last_)) rebase(e);
  put(bucket_of(e), e);
  ++size_;
}

void EventQueue::schedule(EventHandler& h, Time at) {
  assert(at >= 0);
  cancel(h);
  h.time_ = at;
  insert({at, next_seq_++, &h});
}

void EventQueue::cancel(EventHandler& h) {
  if (h.bucket_ == EventHandler::kNotQueued) return;
  take_out(h.bucket_, h.slot_);
  h.bucket_ = EventHandler::kNotQueued;
  --size_;
}

int EventQueue::first_occupied() const {
  for (int s = 0; s < kSummaryWords; ++s) {
    if (summary_[s] != 0) {
      const int w = s * 64 + std::countr_zero(summary_[s]);
      return w * 64 + std::countr_zero(occupied_[w]);
    }
  }
  return -1;
}

void EventQueue::settle_minimum() {
  if (occupied_[0] & 1u) return;
  const int i = first_occupied();
  assert(i > 0);
  std::vector<Entry>& b = buckets_[i];
  std::size_t min = 0;
  for (std::size_t j = 1; j < b.size(); ++j) {
    if (less(b[j], b[min])) min = j;
  }
  last_ = b[min];
  // Every entry of bucket i now lands in a lower bucket: they agree with the new
  // minimum on more leading bits than they did with the old one.
  std::vector<Entry> moving;
  moving.swap(b);
  unmark(i);
  for (const Entry& e : moving) put(bucket_of(e), e);
  moving.clear();
  if (b.capacity() < moving.capacity()) b.swap(moving);  // keep the larger allocation
}

Time EventQueue::next_time() {
  assert(size_ > 0);
  settle_minimum();
  return last_.time;
}

EventHandler* EventQueue::pop() {
  assert(size_ > 0);
  settle_minimum();
  const Entry e = buckets_[0].back();
  buckets_[0].pop_back();
  unmark(0);
  e.handler->bucket_ = EventHandler::kNotQueued;
  --size_;
  return e.handler;
}

void EventQueue::rebase(const Entry& new_last) {
  std::vector<Entry> all;
  all.reserve(size_);
  for (auto& b : buckets_) {
    all.insert(all.end(), b.begin(), b.end());
    b.clear();
  }
  occupied_ = {};
  summary_ = {};
  last_ = new_last;
  for (const Entry& e : all) put(bucket_of(e), e);
}

}  // namespace fabricsim
