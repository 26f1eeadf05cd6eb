#pragma once
// Oversubscription per tier: at each switch, the capacity of its links toward the
// endpoints over that of its links away from them (each neighbour placed by its hop
// distance to the nearest endpoint), gathered by the switches' role. 1:1 is
// non-blocking; 4:1 means a fully busy tier below could use a quarter of it above.
#include <cstddef>
#include <string>
#include <vector>

#include "topologies/topology.h"

namespace fabricsim {

struct TierOversubscription {
  std::string role;       // the switches' role ("leaf", "edge", "nic", ...)
  std::size_t switches = 0;  // of that role with links both toward and away from the endpoints
  double lowest = 0;      // down / up capacity: the least and the most among them
  double highest = 0;
};

// Tiers in order of distance from the endpoints; roles whose switches have no links away
// from the endpoints (a top tier, a torus's routers) are left out.
std::vector<TierOversubscription> oversubscription(const Topology& t);

}  // namespace fabricsim
