#pragma once
// A switch's egress ports side by side, in port order, in one block sized before its
// links are made: forwarding then finds port i at a fixed stride from the first, not
// through the switch's list of pointers (at k=32 that list is four lines, and a
// packet's arrival asked for all four because its port is known only a stage later).
#include <cstddef>
#include <new>
#include <utility>

#include "sim/net/egress_port.h"

namespace fabricsim {

class PortBlock {
 public:
  explicit PortBlock(std::size_t capacity)
      : ports_(static_cast<EgressPort*>(::operator new(capacity * sizeof(EgressPort), std::align_val_t{alignof(EgressPort)}))),
        capacity_(capacity) {}
  PortBlock(const PortBlock&) = delete;
  PortBlock& operator=(const PortBlock&) = delete;
  ~PortBlock() {
    for (std::size_t i = used_; i > 0; --i) ports_[i - 1].~EgressPort();
    ::operator delete(static_cast<void*>(ports_), std::align_val_t{alignof(EgressPort)});
  }

  bool full() const { return used_ == capacity_; }
  template <class... Args>
  EgressPort& emplace(Args&&... args) {
    EgressPort* p = new (ports_ + used_) EgressPort(std::forward<Args>(args)...);
    ++used_;
    return *p;
  }

 private:
  EgressPort* ports_;
  std::size_t capacity_;
  std::size_t used_ = 0;
};

}  // namespace fabricsim
