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
  std::vector<PortIndex> pattern;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::int64_t share = total <= 256 ? weights[i] : std::max<std::int64_t>(1, weights[i] * 256 / total);
    pattern.insert(pattern.end(), static_cast<std::size_t>(share), members[i]);
  }
  masks_.push_back(ports);
  patterns_.push_back(std::move(pattern));
  return static_cast<std::uint16_t>(masks_.size() - 1);
}

}  // namespace fabricsim
