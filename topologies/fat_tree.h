#pragma once
// The k-ary three-tier fat-tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and
// k/2 aggregation switches, (k/2)^2 core switches, k^3/4 endpoints, 5k^2/4 switches.
// Edge switch e of pod p serves endpoints p*(k/2)^2 + e*(k/2) + i; aggregation switch j
// of each pod connects to cores j*(k/2) .. j*(k/2) + k/2 - 1.
#include <string>
#include <vector>

#include "topologies/link_spec.h"
#include "topologies/topology.h"

namespace fabricsim {

struct FatTreeSpec {
  int k = 4;
  LinkSpec host_link;  // endpoint - edge
  LinkSpec edge_link;  // edge - aggregation
  LinkSpec core_link;  // aggregation - core
};

constexpr int fat_tree_hosts(int k) { return k * k * k / 4; }
constexpr int fat_tree_switches(int k) { return 5 * k * k / 4; }

// Attaches `endpoints` (at most k^3/4) in order.
void build_fat_tree(Topology& t, const FatTreeSpec& spec, const std::vector<std::uint32_t>& endpoints,
                    const std::string& prefix = "");
Topology fat_tree_topology(const FatTreeSpec& spec);

}  // namespace fabricsim
