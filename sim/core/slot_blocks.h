#pragma once
// FIFO queues in blocks of 256 bytes taken from one pool per simulator, for egress
// queues: a queue holds the blocks its packets fill, and a block a queue has emptied goes
// back to the pool for whichever queue grows next, so a queue holds no more than it
// uses and nothing is copied as it grows.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace fabricsim {

class SlotBlockPool {
 public:
  static constexpr std::size_t kBlockBytes = 256;

  SlotBlockPool() = default;
  SlotBlockPool(const SlotBlockPool&) = delete;
  SlotBlockPool& operator=(const SlotBlockPool&) = delete;

  void* take() {
    if (free_ == nullptr) grow();
    Free* b = free_;
    free_ = b->next;
    // The next block to go out was given back long ago, at scale out of the caches: ask
    // for its link now, not when a queue needs it.
    if (free_ != nullptr) __builtin_prefetch(free_);
    return block_of(b);
  }
  // The link goes in the block's last bytes, the line a queue read last as it drained it.
  void give(void* block) { free_ = new (static_cast<std::byte*>(block) + kLinkAt) Free{free_}; }

  // Past 2 MiB of blocks the pool grows a 2 MiB region at a time, aligned, and hands it
  // to `advise` (the application's: a huge page, which sim/ cannot ask for).
  using MemoryAdvice = void (*)(void* region, std::size_t bytes);
  void set_chunk_advice(MemoryAdvice advise) { advise_ = advise; }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Free {
    Free* next;
  };
  static constexpr std::size_t kLinkAt = kBlockBytes - sizeof(Free);
  static void* block_of(Free* link) { return reinterpret_cast<std::byte*>(link) - kLinkAt; }
  static constexpr std::size_t kSmallRegion = std::size_t{64} << 10;
  static constexpr std::size_t kLargeRegion = std::size_t{2} << 20;
  struct Region {
    std::size_t align;
    void operator()(std::byte* p) const { ::operator delete(static_cast<void*>(p), std::align_val_t{align}); }
  };
  void grow() {
    const bool large = bytes_ >= kLargeRegion;
    const std::size_t size = large ? kLargeRegion : kSmallRegion;
    const std::size_t align = large ? kLargeRegion : kBlockBytes;
    auto* region = static_cast<std::byte*>(::operator new(size, std::align_val_t{align}));
    regions_.emplace_back(region, Region{align});
    if (large && advise_ != nullptr) advise_(region, size);
    bytes_ += size;
    // Handed out in address order.
    for (std::size_t at = size; at >= kBlockBytes; at -= kBlockBytes) give(region + at - kBlockBytes);
  }
  Free* free_ = nullptr;
  std::vector<std::unique_ptr<std::byte, Region>> regions_;
  MemoryAdvice advise_ = nullptr;
  std::size_t bytes_ = 0;
};

// A FIFO of trivially copyable T over blocks from a SlotBlockPool (passed to each call
// that may take or give one, so the queue itself is three words). An empty queue holds
// no block. Slots are written before they are read, so a block is not cleared when taken
// (T is an implicit-lifetime type; `next` is set once a later block is linked).
template <typename T>
class BlockFifo {
  struct Block {
    static constexpr std::size_t kSlots = (SlotBlockPool::kBlockBytes - sizeof(void*)) / sizeof(T);
    T slots[kSlots];
    Block* next;
  };
  static_assert(sizeof(Block) <= SlotBlockPool::kBlockBytes);
  static constexpr std::uint32_t kSlots = static_cast<std::uint32_t>(Block::kSlots);

 public:
  bool empty() const { return size_ == 0; }
  std::uint32_t size() const { return size_; }
  const T& front() const { return head_->slots[head_at_]; }
  void push_back(SlotBlockPool& pool, const T& v) {
    if (tail_ == nullptr) {
      head_ = tail_ = static_cast<Block*>(pool.take());
      head_at_ = tail_at_ = 0;
    } else if (tail_at_ == kSlots) {
      Block* b = static_cast<Block*>(pool.take());
      tail_->next = b;
      tail_ = b;
      tail_at_ = 0;
    }
    tail_->slots[tail_at_++] = v;
    ++size_;
  }
  void pop_front(SlotBlockPool& pool) {
    ++head_at_;
    if (--size_ == 0) {
      // (The head block is the tail block then: a block is taken only to push into it.)
      pool.give(head_);
      head_ = tail_ = nullptr;
    } else if (head_at_ == kSlots) {
      Block* b = head_;
      head_ = b->next;
      head_at_ = 0;
      pool.give(b);
    }
  }

 private:
  Block* head_ = nullptr;
  Block* tail_ = nullptr;
  std::uint32_t size_ = 0;
  std::uint16_t head_at_ = 0;
  std::uint16_t tail_at_ = 0;
};

}  // namespace fabricsim
