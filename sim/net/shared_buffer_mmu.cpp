#include "sim/net/shared_buffer_mmu.h"

#include <algorithm>

namespace fabricsim {

SharedBufferMmu::SharedBufferMmu(const BufferConfig& config, std::size_t ports, int classes,
                                 std::uint8_t pfc_classes_mask, std::vector<std::int64_t> headroom_per_port,
                                 std::int64_t reserve, std::int64_t xon_offset)
    : classes_(classes),
      pfc_mask_(pfc_classes_mask),
      groups_(ports * static_cast<std::size_t>(classes)),
      reserve_(reserve),
      xon_offset_(xon_offset),
      alpha_(config.alpha) {
  // Reserves and headroom are carved out of the memory; the rest is shared.
  std::int64_t carved = reserve_ * static_cast<std::int64_t>(groups_.size());
  for (std::size_t p = 0; p < ports; ++p) {
    const std::int64_t headroom = p < headroom_per_port.size() ? headroom_per_port[p] : 0;
    for (int c = 0; c < classes; ++c) {
      group(static_cast<std::uint16_t>(p), static_cast<std::uint8_t>(c)).headroom_limit =
          static_cast<std::int32_t>(std::min<std::int64_t>(headroom, INT32_MAX));
      if ((pfc_mask_ >> c) & 1u) carved += headroom;
    }
  }
  shared_size_ = std::max<std::int64_t>(0, config.size_bytes - carved);
}

std::int64_t SharedBufferMmu::threshold() const {
  return static_cast<std::int64_t>(alpha_ * static_cast<double>(shared_size_ - shared_used_));
}

SharedBufferMmu::Decision SharedBufferMmu::admit(std::uint16_t port, std::uint8_t c, std::int64_t bytes) {
  Group& g = group(port, c);
  Decision d{true, false};
  if (g.reserve + bytes <= reserve_) {
    g.reserve += bytes;
  } else if (!g.xoff && g.shared + bytes <= threshold() && shared_used_ + bytes <= shared_size_) {
    g.shared += bytes;
    shared_used_ += bytes;
  } else if (pfc(c) && g.headroom + bytes <= g.headroom_limit) {
    g.headroom += bytes;
  } else {
    return {false, false};
  }
  used_ += bytes;
  // Pause before the group runs out of shared room: what is already on the wire lands
  // in the headroom.
  if (pfc(c) && !g.xoff && (g.headroom > 0 || g.shared >= threshold())) {
    g.xoff = true;
    d.send_xoff = true;
  }
  return d;
}

bool SharedBufferMmu::release(std::uint16_t port, std::uint8_t c, std::int64_t bytes) {
  Group& g = group(port, c);
  used_ -= bytes;
  std::int64_t left = bytes;
  const std::int64_t from_headroom = std::min(left, g.headroom);
  g.headroom -= from_headroom;
  left -= from_headroom;
  const std::int64_t from_shared = std::min(left, g.shared);
  g.shared -= from_shared;
  shared_used_ -= from_shared;
  left -= from_shared;
  g.reserve -= std::min(left, g.reserve);
  if (g.xoff && g.headroom == 0 && g.shared <= std::max<std::int64_t>(0, threshold() - xon_offset_)) {
    g.xoff = false;
    return true;
  }
  return false;
}

}  // namespace fabricsim
