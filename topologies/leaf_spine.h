#pragma once
// Two-tier leaf/spine (a folded Clos): every leaf connects to every spine with
// `links_per_pair` parallel cables; hosts hang off the leaves. Names: h<i>, leaf<i>,
// spine<i>, hosts numbered leaf by leaf.
#include "topologies/topology.h"

namespace fabricsim {

struct LinkSpec {
  Bandwidth bandwidth = Bandwidth::gbps(400);
  Time latency = ns(500);
};

struct LeafSpineSpec {
  int leaves = 2;
  int spines = 2;
  int hosts_per_leaf = 4;
  int links_per_pair = 1;
  LinkSpec host_link;
  LinkSpec fabric_link;
};

Topology build_leaf_spine(const LeafSpineSpec& spec);

}  // namespace fabricsim
