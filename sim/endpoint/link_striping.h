#pragma once
// GPU multi-link striping: an in-network transfer leaves a GPU over all of its links
// toward the destination, packet n by a fixed pattern in proportion to the links'
// bandwidth, the ports interleaved, as NVLink stripes addresses finely over a GPU's links.
// Every contributor to one sum uses the same pattern and offset, so their packet n meet at
// the same switch.
#include <cstdint>
#include <vector>

#include "sim/net/egress_port.h"

namespace fabricsim {

class LinkStriping {
 public:
  // The pattern over port set `ports` (bit p: ports[p]), made the first time it is asked.
  std::uint16_t pattern_for(std::uint64_t ports, const std::vector<EgressPort*>& all_ports);
  // The port packet `seq` of a piece whose packet 0 falls at `offset` in `pattern` leaves by.
  PortIndex port_for(std::uint16_t pattern, std::uint32_t offset, std::uint32_t seq) const {
    const std::vector<PortIndex>& p = patterns_[pattern];
    return p[(seq + offset) % p.size()];
  }

 private:
  std::vector<std::uint64_t> masks_;  // per pattern, its port set
  std::vector<std::vector<PortIndex>> patterns_;  // per port set, packet n goes to pattern[n % size]
};

}  // namespace fabricsim
