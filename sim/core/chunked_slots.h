#pragma once
// Numbered slots in chunks that never move, reused once released, for tables that one
// thread grows while others read entries they were told of earlier: in a run split over
// threads a sender opens its receive at the destination's NIC, and makes a message record
// that the receiver's partition reads after the window. Allocating and releasing take a
// lock when split (once per message, never per packet); reading an entry takes none. The chunk
// index is published with release order and every index ever used stays alive until the
// table dies, so a reader holding an older one still finds each chunk it can name.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace fabricsim {

template <typename T, unsigned kChunkBits>
class ChunkedSlots {
 public:
  static constexpr std::uint32_t kChunk = 1u << kChunkBits;

  ChunkedSlots() = default;
  ChunkedSlots(const ChunkedSlots&) = delete;
  ChunkedSlots& operator=(const ChunkedSlots&) = delete;

  T& operator[](std::uint32_t i) { return index_.load(std::memory_order_acquire)[i >> kChunkBits][i & (kChunk - 1)]; }
  const T& operator[](std::uint32_t i) const {
    return index_.load(std::memory_order_acquire)[i >> kChunkBits][i & (kChunk - 1)];
  }
  // Slots ever made (live or free).
  std::uint32_t size() const { return size_.load(std::memory_order_acquire); }
  // Prefetch stages for slot i (i may be stale: checked): the index entry, then the slot.
  void prefetch_index(std::uint32_t i) const {
    if (i < size()) __builtin_prefetch(&index_.load(std::memory_order_relaxed)[i >> kChunkBits]);
  }
  void prefetch(std::uint32_t i) const {
    if (i < size()) __builtin_prefetch(&(*this)[i]);
  }

  // Whether allocate() and release() lock: only a run split over threads needs it (a
  // serial run saves the lock, twice per message).
  void set_locking(bool locking) { locking_ = locking; }

  // A slot, fresh (T{}) whether new or reused.
  std::uint32_t allocate() {
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    if (locking_) lock.lock();
    if (!free_.empty()) {
      const std::uint32_t i = free_.back();
      free_.pop_back();
      (*this)[i] = T{};
      return i;
    }
    const std::uint32_t i = size_.load(std::memory_order_relaxed);
    if ((i & (kChunk - 1)) == 0) add_chunk(i >> kChunkBits);
    size_.store(i + 1, std::memory_order_release);
    return i;
  }
  // Slot i may serve a later allocate(); `clear` resets it now (frees what it holds).
  void release(std::uint32_t i, bool clear = false) {
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    if (locking_) lock.lock();
    if (clear) (*this)[i] = T{};
    free_.push_back(i);
  }

 private:
  void add_chunk(std::uint32_t c) {
    if (c >= capacity_) {
      const std::uint32_t grown = capacity_ == 0 ? 4 : 2 * capacity_;
      auto bigger = std::make_unique<T*[]>(grown);
      for (std::uint32_t k = 0; k < capacity_; ++k) bigger[k] = indexes_.back()[k];
      indexes_.push_back(std::move(bigger));
      capacity_ = grown;
    }
    chunks_.push_back(std::make_unique<T[]>(kChunk));
    indexes_.back()[c] = chunks_.back().get();
    index_.store(indexes_.back().get(), std::memory_order_release);
  }

  std::atomic<T**> index_{nullptr};
  std::atomic<std::uint32_t> size_{0};
  std::uint32_t capacity_ = 0;  // chunks the newest index holds
  std::vector<std::unique_ptr<T*[]>> indexes_;
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::vector<std::uint32_t> free_;
  std::mutex mutex_;
  bool locking_ = true;
};

}  // namespace fabricsim
