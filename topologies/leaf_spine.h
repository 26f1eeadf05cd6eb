#pragma once
// Two-tier leaf/spine (a folded Clos): every leaf connects to every spine with
// `links_per_pair` parallel cables; endpoints hang off the leaves, `hosts_per_leaf`
// each, in order. Switches are named <prefix>leaf<i> and <prefix>spine<i>.
#include <string>
#include <vector>

#include "topologies/link_spec.h"
#include "topologies/topology.h"

namespace fabricsim {

struct LeafSpineSpec {
  int leaves = 2;
  int spines = 2;
  int hosts_per_leaf = 4;
  int links_per_pair = 1;
  LinkSpec host_link;
  LinkSpec fabric_link;
};

// Oversubscription of a leaf: host-facing capacity over spine-facing capacity.
double leaf_spine_oversubscription(const LeafSpineSpec& spec);
// The leaf-to-spine bandwidth that gives `ratio` (e.g. 2 for 2:1).
Bandwidth fabric_bandwidth_for(const LeafSpineSpec& spec, double ratio);

// What the parts are called: the rail-optimized fabric is a leaf/spine under other names.
struct LeafSpineNames {
  std::string leaf = "leaf";
  std::string host_tier = "host";
  std::string fabric_tier = "leaf-spine";
};

// Attaches `endpoints` (at most leaves * hosts_per_leaf) in order.
void build_leaf_spine(Topology& t, const LeafSpineSpec& spec, const std::vector<std::uint32_t>& endpoints,
                      const std::string& prefix = "", const LeafSpineNames& names = {});
// A standalone leaf/spine with hosts h0, h1, ...
Topology leaf_spine_topology(const LeafSpineSpec& spec);

}  // namespace fabricsim
