#include "sim/event_queue.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace fabricsim {

void EventQueue::forget(EventHandler& h) {
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
    batch_dirty_ = false;
    next_round_.clear();
    forgotten_ = 0;
  }
}

bool EventQueue::settle(Time limit) {
  for (;;) {
    if (batch_dirty_) {
      std::sort(batch_.begin() + static_cast<std::ptrdiff_t>(batch_head_), batch_.end(), before);
      batch_dirty_ = false;
    }
    // Forgotten entries at the head of the batch go.
    while (batch_head_ < batch_.size() && !live(batch_[batch_head_])) {
      ++batch_head_;
      --forgotten_;
    }
    if (batch_head_ < batch_.size()) return now_ <= limit;
    batch_.clear();
    batch_head_ = 0;
    if (!next_round_.empty()) {
      // The round ran out; those scheduled at this time meanwhile are the next one.
      batch_.swap(next_round_);
      if (batch_.size() > 1) std::sort(batch_.begin(), batch_.end(), before);
      continue;
    }
    const int i = first_occupied();
    assert(i >= 0);
    std::vector<Entry>& b = buckets_[static_cast<std::size_t>(i)];
    const Time earliest = bucket_min_[static_cast<std::size_t>(i)];
    // Later than the limit: stop here, before now_ moves (the bound may be a forgotten
    // entry's; the live ones are no earlier).
    if (earliest > limit) return false;
    now_ = earliest;
    running_now_ = false;
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
    if (batch_.size() > 1) std::sort(batch_.begin(), batch_.end(), before);
  }
}

Time EventQueue::lower_bound_time() {
  if (size_ == 0) return kTimeMax;
  if (batch_dirty_ || batch_head_ < batch_.size() || !next_round_.empty()) return now_;
  const int i = first_occupied();
  return i < 0 ? kTimeMax : bucket_min_[static_cast<std::size_t>(i)];
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
  running_now_ = true;
  return e.handler;
}

void EventQueue::rebase(Time new_now) {
  std::vector<Entry> all(batch_.begin() + static_cast<std::ptrdiff_t>(batch_head_), batch_.end());
  all.insert(all.end(), next_round_.begin(), next_round_.end());
  next_round_.clear();
  for (auto& b : buckets_) {
    all.insert(all.end(), b.begin(), b.end());
    b.clear();
  }
  occupied_ = {};
  batch_.clear();
  batch_head_ = 0;
  now_ = new_now;
  running_now_ = false;
  batch_dirty_ = false;
  for (const Entry& e : all) {
    if (e.time == now_) {
      batch_.push_back(e);
    } else {
      put(e);
    }
  }
  std::sort(batch_.begin(), batch_.end(), before);
}

}  // namespace fabricsim
