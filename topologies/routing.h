#pragma once
// Routing compiled from the topology graph: for every node (switches and endpoints) a
// table of next-hop ports keyed by destination group (sim/net/route_table.h). A pure
// function of the topology, chosen by its RoutingScheme.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "sim/net/route_table.h"
#include "topologies/topology.h"

namespace fabricsim {

// Port numbers per node follow the order of the node's links in the topology, as
// Network::connect numbers them.
struct Adjacent {
  std::uint32_t node;
  std::uint32_t link;
  PortIndex port;  // port number at the near end
};
std::vector<std::vector<Adjacent>> adjacency(const Topology& t);

struct Routes {
  std::vector<std::uint32_t> host_group;  // destination group of each host
  std::uint32_t group_count = 0;
  std::vector<RouteTable> tables;         // per topology node (hosts too: a GPU chooses among its links)
  std::string unreachable;                // the first endpoint pair that cannot reach, described; empty if none

  std::span<const PortIndex> to(std::uint32_t node, HostId dst) const { return tables[node].to(dst, host_group[dst]); }
};

// Called now and then while routes are computed: groups done, groups in all.
using RoutingProgress = std::function<void(std::uint32_t done, std::uint32_t total)>;

// All least-cost paths (ECMP sets) over link costs, in which only switches relay; or,
// where the topology says so, dimension-order on a torus (correct X, then Y, then Z,
// each the shorter way round, ties positive; everything off the torus least-cost).
//
// Groups: a host's group is the set of fabric switches it enters through, with their
// costs. A switch that serves one host alone and is that host's only way into the
// fabric (a GPU's NIC) is folded into the host, so GPUs behind one rail leaf share a
// group. Switches whose neighbours are all hosts (NVSwitch chips) reach only those hosts.
// One Dijkstra per group; per-host exceptions where a node is next to the host. The
// Dijkstras run on `threads` threads (the tables are the same for any number).
Routes compute_routes(const Topology& t, const RoutingProgress& progress = {}, int threads = 1);

// How many destination groups compute_routes() would key the tables by (cheap).
std::uint32_t route_group_count(const Topology& t);

// Hops along routed paths from every host to every host (-1: unreachable), by
// following the tables; [src][dst]. Quadratic in hosts: for analysis of small fabrics.
std::vector<std::vector<int>> routed_hops(const Topology& t, const Routes& routes);

// Number of distinct routed paths from host `src` to host `dst` (product of ECMP choices).
std::uint64_t routed_path_count(const Topology& t, const Routes& routes, std::uint32_t src, std::uint32_t dst);

}  // namespace fabricsim
