#pragma once
// Rail-optimized fabric, as DGX SuperPODs are cabled: nodes of `rails` NICs; NIC r of
// every node connects to rail switch r, so same-rail traffic crosses one switch; rail
// switches are joined by `spines` spine switches (`links_per_pair` cables between each
// rail and each spine) for cross-rail traffic. It is a leaf/spine whose leaf r serves
// NIC r of each node, and is built as one.
#include <string>
#include <vector>

#include "topologies/leaf_spine.h"

namespace fabricsim {

struct RailOptimizedSpec {
  int nodes = 2;
  int rails = 8;
  int spines = 2;
  int links_per_pair = 1;
  LinkSpec nic_link;     // NIC - rail switch
  LinkSpec fabric_link;  // rail switch - spine, spine - core
  // Past one switch's ports: scalable units of `nodes_per_leaf` nodes, each with a rail
  // switch per rail and its own `spines` (a pod), and a third tier of `cores` core
  // switches in `spines` groups: spine j of every unit connects once to each core of
  // group j, as a fat-tree joins its pods. 0: one unit of every node (two tiers).
  int nodes_per_leaf = 0;
  int cores = 0;
  // InfiniBand SHARP in the rail switches: each reduces at this rate (0: they do not),
  // serving CollNet (docs/collectives.md).
  Bandwidth sharp_bandwidth{0};
  int units() const { return nodes_per_leaf <= 0 ? 1 : (nodes + nodes_per_leaf - 1) / nodes_per_leaf; }
};

// The same fabric as a leaf/spine: one leaf per rail, one host port per node.
LeafSpineSpec as_leaf_spine(const RailOptimizedSpec& spec);

// `endpoints` in node order: endpoints[n * rails + r] is NIC r of node n.
void build_rail_optimized(Topology& t, const RailOptimizedSpec& spec, const std::vector<std::uint32_t>& endpoints,
                          const std::string& prefix = "");
// Standalone: endpoints are NICs named n<node>.nic<rail>.
Topology rail_optimized_topology(const RailOptimizedSpec& spec);

}  // namespace fabricsim
