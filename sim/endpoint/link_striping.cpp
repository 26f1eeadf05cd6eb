#include "sim/endpoint/link_striping.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace fabricsim {

std::uint16_t LinkStriping::pattern_for(std::uint64_t ports, const std::vector<EgressPort*>& all_ports) {
  for (std::size_t i = 0; i < masks_.size(); ++i) {
    if (masks_[i] == ports) return static_cast<std::uint16_t>(i);
  }
  // Each port's share of the pattern is its share of the bandwidth, in lowest terms
  // (a DGX H100 GPU's 5, 4, 4 and 5 NVLinks to its four NVSwitch chips: 18 entries),
  // scaled down to at most 256 entries where the speeds share no large divisor.
  std::vector<PortIndex> members;
  std::vector<std::int64_t> weights;
  std::int64_t divisor = 0;
  for (std::uint64_t rest = ports; rest != 0; rest &= rest - 1) {
    const auto port = static_cast<PortIndex>(std::countr_zero(rest));
    members.push_back(port);
    weights.push_back(all_ports[port]->bandwidth().bits_per_second);
    divisor = std::gcd(divisor, weights.back());
  }
  std::int64_t total = 0;
  for (std::int64_t& w : weights) total += (w /= divisor);
  std::vector<std::int64_t> shares;
  std::int64_t entries = 0;
  for (const std::int64_t w : weights) {
    shares.push_back(total <= 256 ? w : std::max<std::int64_t>(1, w * 256 / total));
    entries += shares.back();
  }
  // The shares interleaved (smooth weighted round robin: each entry goes to the port
  // furthest behind its share, the lowest port on a tie), so that any run of consecutive
  // packets, a piece of a few, spreads over the ports in proportion, as NVLink's fine
  // address interleave spreads a piece over every link. Blocks of one port per run would
  // send a whole piece to one or two chips, and pieces whose offsets alias with the
  // pattern's length would pile onto the same ones.
  std::vector<PortIndex> pattern;
  std::vector<std::int64_t> credit(shares.size(), 0);
  for (std::int64_t e = 0; e < entries; ++e) {
    std::size_t best = 0;
    for (std::size_t i = 0; i < shares.size(); ++i) {
      credit[i] += shares[i];
      if (credit[i] > credit[best]) best = i;
    }
    credit[best] -= entries;
    pattern.push_back(members[best]);
  }
  masks_.push_back(ports);
  patterns_.push_back(std::move(pattern));
  return static_cast<std::uint16_t>(masks_.size() - 1);
}

}  // namespace fabricsim
