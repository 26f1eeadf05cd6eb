#pragma once
// FIFO on a power-of-two circular array, for a link's wire past its inline slots (egress
// queues use blocks from a pool: sim/core/slot_blocks.h). The first `Inline` elements live
// inside the object itself, so the common case reads one cache line less; past that it
// moves to the heap and grows by doubling, so a ring that has reached its working size
// never allocates again.
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace fabricsim {

template <typename T, std::size_t Inline = 8>
class RingBuffer {
  static_assert(Inline > 0 && (Inline & (Inline - 1)) == 0, "inline capacity must be a power of two");

 public:
  RingBuffer() = default;
  // (Copies and moves keep the elements; the heap part, if any, moves with them.)
  RingBuffer(RingBuffer&& o) noexcept { *this = std::move(o); }
  RingBuffer& operator=(RingBuffer&& o) noexcept {
    for (std::size_t i = 0; i < Inline; ++i) inline_[i] = o.inline_[i];
    heap_ = std::move(o.heap_);
    mask_ = o.mask_;
    head_ = o.head_;
    tail_ = o.tail_;
    return *this;
  }

  bool empty() const { return head_ == tail_; }
  std::size_t size() const { return static_cast<std::uint32_t>(tail_ - head_); }
  T& front() {
    assert(!empty());
    return data()[head_ & mask_];
  }
  const T& front() const {
    assert(!empty());
    return data()[head_ & mask_];
  }
  void push_back(const T& v) {
    if (size() == std::size_t{mask_} + 1) grow();
    data()[tail_++ & mask_] = v;
  }
  // The slot k places after the back or the front, wrapping (for prefetching: it may
  // hold nothing yet). slot_after_back(0) is where the next push_back() writes, while
  // there is room.
  const T& slot_after_back(std::size_t k) const { return data()[(tail_ + k) & mask_]; }
  const T& slot_after_front(std::size_t k) const { return data()[(head_ + k) & mask_]; }
  void pop_front() {
    assert(!empty());
    ++head_;
  }
  void clear() { head_ = tail_; }  // (keeps the allocation)

 private:
  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  void grow() {
    const std::size_t cap = (std::size_t{mask_} + 1) * 2;
    if (cap > std::size_t{1} << 31) throw std::length_error("ring buffer over 2^31 elements");
    auto bigger = std::make_unique<T[]>(cap);
    const std::uint32_t n = tail_ - head_;
    const T* old = data();
    for (std::uint32_t i = 0; i < n; ++i) bigger[i] = old[(head_ + i) & mask_];
    heap_ = std::move(bigger);
    mask_ = static_cast<std::uint32_t>(cap - 1);
    head_ = 0;
    tail_ = n;
  }

  // Monotone counters, masked on access (32 bits: a ring holds fewer than 2^32, and
  // three narrow counters leave room on a port's queue line for its counters).
  std::uint32_t mask_ = Inline - 1;
  std::uint32_t head_ = 0;
  std::uint32_t tail_ = 0;
  std::unique_ptr<T[]> heap_;
  T inline_[Inline]{};
};

}  // namespace fabricsim
