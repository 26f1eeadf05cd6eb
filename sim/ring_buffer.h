#pragma once
// FIFO on a power-of-two circular array. Grows by doubling when full, so a queue that
// has reached its working size never allocates again.
#include <cassert>
#include <cstddef>
#include <memory>

namespace fabricsim {

template <typename T>
class RingBuffer {
 public:
  explicit RingBuffer(std::size_t initial_capacity = 16) {
    std::size_t cap = 1;
    while (cap < initial_capacity) cap <<= 1;
    data_ = std::make_unique<T[]>(cap);
    mask_ = cap - 1;
  }

  bool empty() const { return head_ == tail_; }
  std::size_t size() const { return tail_ - head_; }
  T& front() {
    assert(!empty());
    return data_[head_ & mask_];
  }
  const T& front() const {
    assert(!empty());
    return data_[head_ & mask_];
  }
  void push_back(const T& v) {
    if (size() == mask_ + 1) grow();
    data_[tail_++ & mask_] = v;
  }
  void pop_front() {
    assert(!empty());
    ++head_;
  }

 private:
  void grow() {
    const std::size_t cap = (mask_ + 1) * 2;
    auto bigger = std::make_unique<T[]>(cap);
    const std::size_t n = size();
    for (std::size_t i = 0; i < n; ++i) bigger[i] = data_[(head_ + i) & mask_];
    data_ = std::move(bigger);
    mask_ = cap - 1;
    head_ = 0;
    tail_ = n;
  }

  std::unique_ptr<T[]> data_;
  std::size_t mask_ = 0;
  std::size_t head_ = 0;  // monotone counters; masked on access
  std::size_t tail_ = 0;
};

}  // namespace fabricsim
