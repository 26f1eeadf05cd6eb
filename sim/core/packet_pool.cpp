#include "sim/core/packet_pool.h"

namespace fabricsim {

void PacketPool::grow() {
  const bool chunk = blocks_.size() >= kChunkBlocks;
  const std::size_t count = chunk ? kChunkBlocks : 1;
  const std::size_t bytes = count * kBlockPackets * sizeof(Packet);
  const std::size_t align = chunk ? kChunkBytes : alignof(Packet);
  auto* region = static_cast<Packet*>(::operator new(bytes, std::align_val_t{align}));
  regions_.emplace_back(region, Region{align});
  if (chunk && advise_ != nullptr) advise_(region, bytes);
  const auto first = static_cast<std::uint32_t>(blocks_.size() * kBlockPackets);
  const std::size_t packets = count * kBlockPackets;
  for (std::size_t i = 0; i < packets; ++i) {
    Packet* p = new (region + i) Packet;
    p->pool_index = first + static_cast<std::uint32_t>(i);
  }
  for (std::size_t b = 0; b < count; ++b) {
    blocks_.push_back(region + b * kBlockPackets);
    if (telemetry_wanted_) telemetry_.push_back(std::make_unique<IntStack[]>(kBlockPackets));
  }
  // Handed out in address order (friendlier to caches), then whatever was free before.
  for (std::size_t i = 0; i < packets; ++i) {
    region[i].message = i + 1 < packets ? first + static_cast<std::uint32_t>(i + 1) : free_head_;
  }
  free_head_ = first;
}

}  // namespace fabricsim

namespace fabricsim {

void PacketPool::enable_telemetry() {
  if (telemetry_wanted_) return;
  telemetry_wanted_ = true;
  while (telemetry_.size() < blocks_.size()) telemetry_.push_back(std::make_unique<IntStack[]>(kBlockPackets));
}

}  // namespace fabricsim
