#pragma once
// FIFO on a power-of-two circular array. The first `Inline` elements live inside the
// object itself (a link holds the few packets on its wire, a queue its head), so the
// common case reads one cache line less; past that it moves to the heap and grows by
// doubling, so a queue that has reached its working size never allocates again.
#include <cassert>
#include <cstddef>
#include <memory>

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
  std::size_t size() const { return tail_ - head_; }
  T& front() {
    assert(!empty());
    return data()[head_ & mask_];
  }
  const T& front() const {
    assert(!empty());
    return data()[head_ & mask_];
  }
  void push_back(const T& v) {
    if (size() == mask_ + 1) grow();
    data()[tail_++ & mask_] = v;
  }
  // Where the next push_back() writes, while there is room (for prefetching).
  const T& back_slot() const { return data()[tail_ & mask_]; }
  void pop_front() {
    assert(!empty());
    ++head_;
  }

 private:
  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  void grow() {
    const std::size_t cap = (mask_ + 1) * 2;
    auto bigger = std::make_unique<T[]>(cap);
    const std::size_t n = size();
    const T* old = data();
    for (std::size_t i = 0; i < n; ++i) bigger[i] = old[(head_ + i) & mask_];
    heap_ = std::move(bigger);
    mask_ = cap - 1;
    head_ = 0;
    tail_ = n;
  }

  std::size_t mask_ = Inline - 1;
  std::size_t head_ = 0;  // monotone counters; masked on access
  std::size_t tail_ = 0;
  std::unique_ptr<T[]> heap_;
  T inline_[Inline]{};
};

}  // namespace fabricsim
