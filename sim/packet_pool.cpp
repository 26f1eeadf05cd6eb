#include "sim/packet_pool.h"

namespace fabricsim {

void PacketPool::grow() {
  const auto first = static_cast<std::uint32_t>(blocks_.size() * kBlockPackets);
  blocks_.push_back(std::make_unique_for_overwrite<Packet[]>(kBlockPackets));
  if (telemetry_wanted_) telemetry_.push_back(std::make_unique<IntStack[]>(kBlockPackets));
  Packet* block = blocks_.back().get();
  for (std::size_t i = 0; i < kBlockPackets; ++i) block[i].pool_index = first + static_cast<std::uint32_t>(i);
  free_.reserve(capacity());
  // Push in reverse so packets are handed out in address order: friendlier to caches.
  for (std::size_t i = kBlockPackets; i-- > 0;) free_.push_back(&block[i]);
}

}  // namespace fabricsim

namespace fabricsim {

void PacketPool::enable_telemetry() {
  if (telemetry_wanted_) return;
  telemetry_wanted_ = true;
  while (telemetry_.size() < blocks_.size()) telemetry_.push_back(std::make_unique<IntStack[]>(kBlockPackets));
}

}  // namespace fabricsim
