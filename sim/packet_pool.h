#pragma once
// Free-list pool of packets. Memory grows in blocks and is reused, so the steady state
// allocates nothing; every packet is freed exactly once by the element that consumes it.
#include <cstddef>
#include <memory>
#include <vector>

#include "sim/packet.h"
#include "sim/telemetry.h"

namespace fabricsim {

class PacketPool {
 public:
  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  // A packet with every field cleared (its pool index kept).
  Packet* allocate() {
    if (free_.empty()) grow();
    Packet* p = free_.back();
    free_.pop_back();
    ++in_use_;
    const std::uint32_t index = p->pool_index;
    *p = Packet{};
    p->pool_index = index;
    if (telemetry_wanted_) telemetry(p).hops = 0;
    return p;
  }
  void release(Packet* p) {
    free_.push_back(p);
    --in_use_;
  }

  // The packet with pool index `index` (what a queue slot or a link's wire holds).
  Packet* at(std::uint32_t index) { return blocks_[index / kBlockPackets].get() + index % kBlockPackets; }
  const Packet* at(std::uint32_t index) const { return blocks_[index / kBlockPackets].get() + index % kBlockPackets; }

  // Gives every packet an INT stack (for congestion control that reads telemetry).
  void enable_telemetry();
  IntStack& telemetry(const Packet* p) {
    return telemetry_[p->pool_index / kBlockPackets][p->pool_index % kBlockPackets];
  }

  bool telemetry_enabled() const { return telemetry_wanted_; }
  std::size_t in_use() const { return in_use_; }
  std::size_t capacity() const { return blocks_.size() * kBlockPackets; }

 private:
  static constexpr std::size_t kBlockPackets = 4096;
  void grow();

  std::vector<std::unique_ptr<Packet[]>> blocks_;
  std::vector<std::unique_ptr<IntStack[]>> telemetry_;  // per block, when enabled
  bool telemetry_wanted_ = false;
  std::vector<Packet*> free_;
  std::size_t in_use_ = 0;
};

}  // namespace fabricsim
