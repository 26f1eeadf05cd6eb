#include "sim/packet_pool.h"

namespace fabricsim {

void PacketPool::grow() {
  blocks_.push_back(std::make_unique_for_overwrite<Packet[]>(kBlockPackets));
  Packet* block = blocks_.back().get();
  free_.reserve(capacity());
  // Push in reverse so packets are handed out in address order: friendlier to caches.
  for (std::size_t i = kBlockPackets; i-- > 0;) free_.push_back(&block[i]);
}

}  // namespace fabricsim
