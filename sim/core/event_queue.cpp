#include "sim/core/event_queue.h"

#include <algorithm>
#include <array>
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
        const auto b = static_cast<std::size_t>(w * 64 + std::countr_zero(bits));
        buckets_[b].clear();
        bucket_min_[b] = kTimeMax;
      }
    }
    occupied_ = {};
    for (DelayFifo& q : fifos_) q.entries.clear();
    fifo_head_.fill(kTimeMax);  // (the winners stay right: every head is kTimeMax)
    batch_.clear();
    batch_head_ = 0;
    batch_dirty_ = false;
    next_round_.clear();
    forgotten_ = 0;
  }
}

// Small rounds (most at k=8, whose rounds average two entries) are a few short sorted
// runs: insertion sort moves little and calls nothing.
void EventQueue::insertion_sort(Entry* a, std::size_t n) {
  for (std::size_t i = 1; i < n; ++i) {
    const Entry e = a[i];
    const std::uint64_t k = Before::key(e);
    std::size_t j = i;
    for (; j > 0 && k < Before::key(a[j - 1]); --j) a[j] = a[j - 1];
    a[j] = e;
  }
}

// Rounds of two to four entries (most of a small fabric's) come in no order a branch
// predictor learns: a sorting network of compare-exchanges that select rather than branch.
void EventQueue::sort_few(Entry* a, std::size_t n) {
  const auto exchange = [a](std::size_t i, std::size_t j) {
    const Entry x = a[i];
    const Entry y = a[j];
    const bool swap = Before::key(y) < Before::key(x);
    a[i].time = swap ? y.time : x.time;
    a[i].handler = swap ? y.handler : x.handler;
    a[i].order = swap ? y.order : x.order;
    a[i].seq = swap ? y.seq : x.seq;
    a[j].time = swap ? x.time : y.time;
    a[j].handler = swap ? x.handler : y.handler;
    a[j].order = swap ? x.order : y.order;
    a[j].seq = swap ? x.seq : y.seq;
  };
  switch (n) {
    case 2:
      exchange(0, 1);
      break;
    case 3:
      exchange(0, 2);
      exchange(0, 1);
      exchange(1, 2);
      break;
    case 4:
      exchange(0, 1);
      exchange(2, 3);
      exchange(0, 2);
      exchange(1, 3);
      exchange(1, 2);
      break;
    default:
      break;
  }
}

void EventQueue::sort_round() {
  Entry* const a = batch_.data();
  const std::size_t n = batch_.size();
  // From here radix passes beat insertion sort's moves and std::sort's mispredicted
  // comparisons (docs/performance.md).
  constexpr std::size_t kRadixFrom = 32;
  if (n <= 4) {
    sort_few(a, n);
    return;
  }
  if (n < kRadixFrom) {
    insertion_sort(a, n);
    return;
  }
  std::uint32_t lo = UINT32_MAX;
  std::uint32_t hi = 0;
  for (std::size_t i = 0; i < n; ++i) {
    lo = std::min(lo, a[i].order);
    hi = std::max(hi, a[i].order);
  }
  // Digits of about log2(n) bits, so clearing and summing the counters costs no more
  // than the entries do, in as few passes as that allows (at most kMaxPasses; wider
  // digits where more would be needed). At k=32 the keys span 17 bits: rounds of a few
  // hundred take two passes of 9 bits, rounds of 32-127 three of 6, where std::sort's
  // comparisons mispredicted about half the time.
  const int bits = std::bit_width(hi - lo);
  const int cap = std::clamp(static_cast<int>(std::bit_width(n)) + 1, 4, kMaxDigitBits);
  int passes = (bits + cap - 1) / cap;
  if (passes > kMaxPasses) passes = (bits + kMaxDigitBits - 1) / kMaxDigitBits;
  if (passes > kMaxPasses) {  // keys spread too far (handlers without one among them)
    std::sort(a, a + n, before);
    return;
  }
  const int width = passes == 0 ? 0 : (bits + passes - 1) / passes;
  const std::uint32_t mask = (1u << width) - 1;
  const std::size_t values = std::size_t{1} << width;
  for (int d = 0; d < passes; ++d) std::fill_n(radix_counts_[static_cast<std::size_t>(d)].begin(), values, 0u);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t k = a[i].order - lo;
    for (int d = 0; d < passes; ++d) ++radix_counts_[static_cast<std::size_t>(d)][(k >> (d * width)) & mask];
  }
  // LSD radix on (order - lo): stable, so after the last pass entries are in order of
  // key, and within a key in the order they came.
  sort_scratch_.resize(n);
  Entry* src = a;
  Entry* dst = sort_scratch_.data();
  for (int d = 0; d < passes; ++d) {
    std::uint32_t* c = radix_counts_[static_cast<std::size_t>(d)].data();
    std::uint32_t sum = 0;
    for (std::size_t v = 0; v < values; ++v) {
      const std::uint32_t here = c[v];
      c[v] = sum;
      sum += here;
    }
    for (std::size_t i = 0; i < n; ++i) dst[c[((src[i].order - lo) >> (d * width)) & mask]++] = src[i];
    std::swap(src, dst);
  }
  // An odd number of passes left the round in the scratch buffer: trade buffers.
  if (src != a) batch_.swap(sort_scratch_);
  Entry* const sorted = batch_.data();
  // Equal keys by sequence.
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && sorted[j].order == sorted[i].order) ++j;
    if (j - i > 1) {
      if (j - i < kRadixFrom) {
        insertion_sort(sorted + i, j - i);
      } else {
        std::sort(sorted + i, sorted + j, before);
      }
    }
    i = j;
  }
}

bool EventQueue::settle(Time limit) {
  for (;;) {
    if (batch_dirty_) {
      // Mostly sorted already: entries added to a round not yet begun (a partition's
      // inbox between windows) go at its end. std::sort is quick on that; radix passes
      // would cost as much as on a round in any order.
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
      sort_round();
      continue;
    }
    const int i = first_occupied();
    const Time heap_min = i >= 0 ? bucket_min_[static_cast<std::size_t>(i)] : kTimeMax;
    const Time earliest = std::min(heap_min, earliest_fifo_head());
    // Later than the limit: stop here, before now_ moves (the bound may be a forgotten
    // entry's; the live ones are no earlier).
    if (earliest > limit) return false;
    now_ = earliest;
    running_now_ = false;
    if (i >= 0 && heap_min == earliest) {
      // Every other entry of bucket i lands in a lower bucket: it agrees with the new
      // base on more leading digits than it did with the old one.
      heap_base_ = earliest;
      std::vector<Entry>& b = buckets_[static_cast<std::size_t>(i)];
      std::vector<Entry> moving;
      moving.swap(b);
      occupied_[static_cast<std::size_t>(i >> 6)] &= ~(1ull << (i & 63));
      bucket_min_[static_cast<std::size_t>(i)] = kTimeMax;
      for (const Entry& e : moving) {
        if (e.time != now_) {
          put(e);
        } else {
          batch_.push_back(e);
        }
      }
      moving.clear();
      if (b.capacity() < moving.capacity()) b.swap(moving);  // keep the larger allocation
    }
    // The FIFOs with heads due now give up their entries due now. (None holds kTimeMax,
    // which empty ones read.)
    while (now_ != kTimeMax && earliest_fifo_head() == now_) {
      const int f = fifo_winner_[1];
      RingBuffer<Entry, 1>& q = fifos_[static_cast<std::size_t>(f)].entries;
      // (Read as long after they were written: asked for ahead too.)
      do {
        __builtin_prefetch(&q.slot_after_front(kFifoPrefetchAhead));
        batch_.push_back(q.front());
        q.pop_front();
      } while (!q.empty() && q.front().time == now_);
      set_fifo_head(f, q.empty() ? kTimeMax : q.front().time);
    }
    sort_round();
  }
}

Time EventQueue::lower_bound_time() {
  if (size_ == 0) return kTimeMax;
  if (batch_dirty_ || batch_head_ < batch_.size() || !next_round_.empty()) return now_;
  const int i = first_occupied();
  return std::min(i < 0 ? kTimeMax : bucket_min_[static_cast<std::size_t>(i)], earliest_fifo_head());
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
  for (DelayFifo& q : fifos_) {
    for (; !q.entries.empty(); q.entries.pop_front()) all.push_back(q.entries.front());
  }
  fifo_head_.fill(kTimeMax);
  occupied_ = {};
  bucket_min_.fill(kTimeMax);
  batch_.clear();
  batch_head_ = 0;
  now_ = new_now;
  heap_base_ = new_now;
  running_now_ = false;
  batch_dirty_ = false;
  for (const Entry& e : all) {
    if (e.time == now_) {
      batch_.push_back(e);
    } else {
      put(e);
    }
  }
  sort_round();
}

}  // namespace fabricsim
