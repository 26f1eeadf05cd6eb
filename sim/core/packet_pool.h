#pragma once
// Free-list pool of packets. Memory grows in blocks and is reused, so the steady state
// allocates nothing; every packet is freed exactly once by the element that consumes it.
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "sim/core/packet.h"
#include "sim/net/telemetry.h"

namespace fabricsim {

class PacketPool {
 public:
  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  // A packet with every field cleared (its pool index kept).
  Packet* allocate() {
    if (free_head_ == kNoPacket) grow();
    Packet* p = at(free_head_);
    free_head_ = p->message;  // (a free packet's `message` is the next free one)
    ++in_use_;
    const std::uint32_t index = p->pool_index;
    *p = Packet{};
    p->pool_index = index;
    if (telemetry_wanted_) telemetry(p).hops = 0;
    return p;
  }
  void release(Packet* p) {
    p->message = free_head_;
    free_head_ = p->pool_index;
    --in_use_;
  }

  // The packet with pool index `index` (what a queue slot or a link's wire holds).
  Packet* at(std::uint32_t index) { return blocks_[index / kBlockPackets] + index % kBlockPackets; }
  const Packet* at(std::uint32_t index) const { return blocks_[index / kBlockPackets] + index % kBlockPackets; }

  // Gives every packet an INT stack (for congestion control that reads telemetry).
  void enable_telemetry();
  IntStack& telemetry(const Packet* p) {
    return telemetry_[p->pool_index / kBlockPackets][p->pool_index % kBlockPackets];
  }

  bool telemetry_enabled() const { return telemetry_wanted_; }
  std::size_t in_use() const { return in_use_; }
  std::size_t capacity() const { return blocks_.size() * kBlockPackets; }

  // Once the pool holds kChunkBlocks blocks it grows a chunk of that many at a time, one
  // aligned 2 MiB region, and hands it to `advise` (the application's: it asks the
  // operating system for a huge page, which sim/ cannot). At k=32 the pool holds 3 M
  // packets, read once per hop in no order, and with 4 KiB pages nearly every read also
  // missed the TLB. Set before the first packet.
  using MemoryAdvice = void (*)(void* region, std::size_t bytes);
  void set_chunk_advice(MemoryAdvice advise) { advise_ = advise; }
  static constexpr std::size_t kBlockPackets = 4096;
  static constexpr std::size_t kChunkBlocks = 8;  // 8 x 4096 x 64 bytes: 2 MiB
  static constexpr std::size_t kChunkBytes = kChunkBlocks * kBlockPackets * sizeof(Packet);

 private:
  void grow();

  struct Region {
    std::size_t align;
    void operator()(Packet* p) const { ::operator delete(static_cast<void*>(p), std::align_val_t{align}); }
  };
  std::vector<std::unique_ptr<Packet, Region>> regions_;  // what was allocated: blocks, then chunks
  std::vector<Packet*> blocks_;                             // kBlockPackets each, in index order
  MemoryAdvice advise_ = nullptr;
  std::vector<std::unique_ptr<IntStack[]>> telemetry_;  // per block, when enabled
  bool telemetry_wanted_ = false;
  // The free packets, last freed first, linked through the packets themselves, so
  // growing the pool copies nothing.
  static constexpr std::uint32_t kNoPacket = UINT32_MAX;
  std::uint32_t free_head_ = kNoPacket;
  std::size_t in_use_ = 0;
};

}  // namespace fabricsim
