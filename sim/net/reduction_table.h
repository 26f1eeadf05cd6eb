#pragma once
// The partial sums a reducing switch holds: contributions counted per (destination,
// receive slot, packet number). Open addressing with linear probing in one flat array,
// so counting a packet allocates nothing once the table has grown to the run's need.
#include <cstdint>
#include <vector>

#include "sim/core/rng.h"

namespace fabricsim {

class ReductionTable {
 public:
  // Counts one more contribution to the sum of packet `seq` of the transfer into `slot`
  // at `dst`; true when that makes `needed` (the entry is then gone).
  bool add(std::uint32_t dst, std::uint32_t slot, std::uint32_t seq, std::uint32_t needed) {
    if (needed <= 1) return true;
    if (2 * (size_ + 1) > entries_.size()) grow();
    std::size_t i = home(dst, slot, seq);
    while (entries_[i].count != 0) {
      Entry& e = entries_[i];
      if (e.dst == dst && e.slot == slot && e.seq == seq) {
        if (++e.count < needed) return false;
        erase_at(i);
        return true;
      }
      i = (i + 1) & mask_;
    }
    entries_[i] = {dst, slot, seq, 1};
    ++size_;
    return false;
  }
  std::size_t size() const { return size_; }  // sums waiting for contributions

 private:
  struct Entry {
    std::uint32_t dst;
    std::uint32_t slot;
    std::uint32_t seq;
    std::uint32_t count;  // 0: empty
  };
  std::size_t home(std::uint32_t dst, std::uint32_t slot, std::uint32_t seq) const {
    const std::uint64_t key = (std::uint64_t{dst} << 32 | slot) ^ (std::uint64_t{seq} * 0x9e3779b97f4a7c15ull);
    return static_cast<std::size_t>(mix64(key)) & mask_;
  }
  void erase_at(std::size_t i) {
    // Backward shift: later entries of the same probe run move up, so no tombstones.
    entries_[i].count = 0;
    --size_;
    std::size_t j = i;
    for (;;) {
      j = (j + 1) & mask_;
      if (entries_[j].count == 0) return;
      const std::size_t h = home(entries_[j].dst, entries_[j].slot, entries_[j].seq);
      // Entry j may fill the hole at i unless its home lies cyclically in (i, j].
      const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (stays) continue;
      entries_[i] = entries_[j];
      entries_[j].count = 0;
      i = j;
    }
  }
  void grow() {
    std::vector<Entry> old = std::move(entries_);
    entries_.assign(old.empty() ? 64 : old.size() * 2, Entry{0, 0, 0, 0});
    mask_ = entries_.size() - 1;
    size_ = 0;
    for (const Entry& e : old) {
      if (e.count == 0) continue;
      std::size_t i = home(e.dst, e.slot, e.seq);
      while (entries_[i].count != 0) i = (i + 1) & mask_;
      entries_[i] = e;
      ++size_;
    }
  }

  std::vector<Entry> entries_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace fabricsim
