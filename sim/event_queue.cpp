#include "sim/event_queue.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace fabricsim {

int EventQueue::bucket_of(Time t) const {
  // The highest hex digit in which t differs from now_, and t's own value of it.
  const auto diff = static_cast<std::uint64_t>(t ^ now_);
  const int digit = (63 - std::countl_zero(diff)) / kDigitBits;
  const int value = static_cast<int>((static_cast<std::uint64_t>(t) >> (digit * kDigitBits)) & (kValues - 1));
  return digit * kValues + value;
}

void EventQueue::put(const Entry& e) {
  const int b = bucket_of(e.time);
  buckets_[static_cast<std::size_t>(b)].push_back(e);
  occupied_[static_cast<std::size_t>(b >> 6)] |= 1ull << (b & 63);
}

void EventQueue::insert(const Entry& e) {
  // Earlier than now only after the simulator peeked past a stop time and was then asked
  // for an earlier event: rare, so an O(n) rebuild is fine.
  if (e.time < now_) rebase(e.time);
  if (e.time == now_) {
    batch_.push_back(e);  // the newest sequence number: the batch stays in order
  } else {
    put(e);
  }
  ++size_;
}

void EventQueue::schedule(EventHandler& h, Time at) {
  assert(at >= 0);
  cancel(h);
  h.time_ = at;
  h.seq_ = next_seq_++;
  insert({at, h.seq_, &h});
}

void EventQueue::cancel(EventHandler& h) {
  if (h.seq_ == 0) return;
  h.seq_ = 0;  // its entry stays where it is, forgotten, until it reaches the front
  --size_;
  ++forgotten_;
  if (size_ == 0) {
    // Nothing live: drop the forgotten entries at once.
    for (int w = 0; w < kWords; ++w) {
      for (std::uint64_t bits = occupied_[static_cast<std::size_t>(w)]; bits != 0; bits &= bits - 1) {
        buckets_[static_cast<std::size_t>(w * 64 + std::countr_zero(bits))].clear();
      }
    }
    occupied_ = {};
    batch_.clear();
    batch_head_ = 0;
    forgotten_ = 0;
  }
}

void EventQueue::settle() {
  for (;;) {
    // Forgotten entries at the head of the batch go.
    while (batch_head_ < batch_.size() && !live(batch_[batch_head_])) {
      ++batch_head_;
      --forgotten_;
    }
    if (batch_head_ < batch_.size()) return;
    batch_.clear();
    batch_head_ = 0;
    int i = -1;
    for (int w = 0; w < kWords; ++w) {
      if (occupied_[static_cast<std::size_t>(w)] != 0) {
        i = w * 64 + std::countr_zero(occupied_[static_cast<std::size_t>(w)]);
        break;
      }
    }
    assert(i >= 0);
    std::vector<Entry>& b = buckets_[static_cast<std::size_t>(i)];
    Time earliest = b.front().time;
    for (const Entry& e : b) earliest = std::min(earliest, e.time);
    now_ = earliest;
    // Every other entry of bucket i lands in a lower bucket: it agrees with the new now_
    // on more leading digits than it did with the old one.
    std::vector<Entry> moving;
    moving.swap(b);
    occupied_[static_cast<std::size_t>(i >> 6)] &= ~(1ull << (i & 63));
    for (const Entry& e : moving) {
      if (e.time == now_) {
        batch_.push_back(e);
      } else {
        put(e);
      }
    }
    moving.clear();
    if (b.capacity() < moving.capacity()) b.swap(moving);  // keep the larger allocation
    if (batch_.size() > 1) {
      std::sort(batch_.begin(), batch_.end(), [](const Entry& x, const Entry& y) { return x.seq < y.seq; });
    }
  }
}

Time EventQueue::next_time() {
  assert(size_ > 0);
  settle();
  return now_;
}

EventHandler* EventQueue::pop() {
  assert(size_ > 0);
  settle();
  const Entry e = batch_[batch_head_++];
  e.handler->seq_ = 0;
  --size_;
  return e.handler;
}

void EventQueue::rebase(Time new_now) {
  std::vector<Entry> all(batch_.begin() + static_cast<std::ptrdiff_t>(batch_head_), batch_.end());
  for (auto& b : buckets_) {
    all.insert(all.end(), b.begin(), b.end());
    b.clear();
  }
  occupied_ = {};
  batch_.clear();
  batch_head_ = 0;
  now_ = new_now;
  for (const Entry& e : all) {
    if (e.time == now_) {
      batch_.push_back(e);
    } else {
      put(e);
    }
  }
  std::sort(batch_.begin(), batch_.end(), [](const Entry& x, const Entry& y) { return x.seq < y.seq; });
}

}  // namespace fabricsim
