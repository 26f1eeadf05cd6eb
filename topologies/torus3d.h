#pragma once
// A 3D torus X x Y x Z of switches with wraparound (6 links per switch; a dimension of
// size 2 gives two parallel links, of size 1 none) and `hosts_per_switch` endpoints on
// each. Switch (x, y, z) is number x + X*(y + Y*z), named <prefix>t<x>.<y>.<z>.
// Routing is dimension-order (topologies/routing.h).
#include <array>
#include <string>
#include <vector>

#include "topologies/link_spec.h"
#include "topologies/topology.h"

namespace fabricsim {

struct Torus3dSpec {
  std::array<int, 3> dims{4, 4, 4};
  std::array<LinkSpec, 3> dim_links;  // X, Y, Z
  LinkSpec host_link;
  int hosts_per_switch = 1;
};

// Attaches `endpoints` (at most X*Y*Z*hosts_per_switch), filling switch 0 first.
void build_torus3d(Topology& t, const Torus3dSpec& spec, const std::vector<std::uint32_t>& endpoints,
                   const std::string& prefix = "");
Topology torus3d_topology(const Torus3dSpec& spec);

// Hops between two switches of the torus along dimension-order routes: the sum of the
// ring distances.
int torus_distance(const std::array<int, 3>& dims, const std::array<int, 3>& a, const std::array<int, 3>& b);

}  // namespace fabricsim
