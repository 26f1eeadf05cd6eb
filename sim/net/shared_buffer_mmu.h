#pragma once
// A switch's packet memory, accounted per ingress port and traffic class (a "priority
// group") as switch ASICs do: each group has a small reserve; beyond it, a shared pool
// whose per-group limit is a dynamic threshold, alpha times the pool's free space; and,
// for classes with PFC, a headroom that absorbs what is still in flight after a PAUSE.
// PFC: XOFF when a group's shared use reaches its threshold, XON when it falls below
// the threshold minus `xon_offset`. Without PFC a packet that fits nowhere is dropped.
#include <cstdint>
#include <vector>

namespace fabricsim {

struct BufferConfig {
  std::int64_t size_bytes = 32 * 1024 * 1024;
  std::int64_t reserve_bytes = 0;   // per (ingress port, class); 0: two MTU-sized packets
  double alpha = 1.0;               // dynamic-threshold factor (1 is a common setting)
  std::int64_t headroom_bytes = 0;  // per (port, PFC class); 0: from the link's bandwidth-delay product
  std::int64_t xon_offset_bytes = 0;  // 0: two MTU-sized packets

  bool operator==(const BufferConfig&) const = default;
};

class SharedBufferMmu {
 public:
  struct Decision {
    bool admitted;
    bool send_xoff;  // the group just crossed its threshold: pause the upstream class
  };

  // `headroom_per_port[p]` is port p's headroom for each PFC class.
  SharedBufferMmu(const BufferConfig& config, std::size_t ports, int classes, std::uint8_t pfc_classes_mask,
                  std::vector<std::int64_t> headroom_per_port, std::int64_t reserve, std::int64_t xon_offset);

  Decision admit(std::uint16_t port, std::uint8_t traffic_class, std::int64_t bytes);
  // Frees what admit() charged (headroom first, then shared, then reserve). Returns true
  // when the group should send XON.
  bool release(std::uint16_t port, std::uint8_t traffic_class, std::int64_t bytes);

  bool pfc(std::uint8_t traffic_class) const { return (pfc_mask_ >> traffic_class) & 1u; }
  bool paused(std::uint16_t port, std::uint8_t traffic_class) const { return group(port, traffic_class).xoff; }
  std::int64_t shared_used() const { return shared_used_; }
  std::int64_t used() const { return used_; }
  std::int64_t threshold() const;  // current dynamic threshold of a group's shared use
  // Asks for the lines admit() and release() of (port, class) will touch.
  // (One line: the group carries its port's headroom, so an arrival or departure at a
  // cold switch asks for one line here, not two.)
  void prefetch_group(std::uint16_t port, std::uint8_t traffic_class) const {
    const std::size_t i = static_cast<std::size_t>(port) * static_cast<std::size_t>(classes_) + traffic_class;
    if (i < groups_.size()) __builtin_prefetch(&groups_[i]);
  }

 private:
  struct alignas(32) Group {  // aligned: a group never straddles two lines
    std::int64_t reserve = 0;
    std::int64_t shared = 0;
    std::int64_t headroom = 0;
    std::int32_t headroom_limit = 0;  // its port's headroom (capped at 2 GiB: no buffer holds more)
    bool xoff = false;
  };
  static_assert(sizeof(Group) == 32, "two groups to a cache line");
  Group& group(std::uint16_t port, std::uint8_t c) { return groups_[port * classes_ + c]; }
  const Group& group(std::uint16_t port, std::uint8_t c) const { return groups_[port * classes_ + c]; }

  // (classes_ and groups_ first: prefetch_group reads them.)
  int classes_;
  std::uint8_t pfc_mask_;
  std::vector<Group> groups_;
  std::int64_t shared_size_;
  std::int64_t shared_used_ = 0;
  std::int64_t used_ = 0;
  std::int64_t reserve_;
  std::int64_t xon_offset_;
  double alpha_;
};

}  // namespace fabricsim
