#pragma once
// Routing compiled from the topology graph: for every node (switches and endpoints),
// for every destination host, the next-hop ports. Pure functions of the topology,
// chosen by its RoutingScheme.
#include <cstdint>
#include <vector>

#include "sim/route_table.h"
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

// One table per node, indexed by node number (hosts' tables too: a GPU with several
// links chooses among them).
std::vector<RouteTable> compute_routes(const Topology& t);

// All least-cost paths (ECMP sets): a Dijkstra from each destination host over link
// costs, in which only switches relay.
std::vector<RouteTable> shortest_path_routes(const Topology& t);

// Dimension-order routing on a torus (needs t.torus()): correct X, then Y, then Z, each
// the shorter way round (ties: the positive direction). Endpoints use least-cost paths.
std::vector<RouteTable> dimension_order_routes(const Topology& t);

// Hops along routed paths from every host to every host (-1: unreachable), by
// following the tables; [src][dst].
std::vector<std::vector<int>> routed_hops(const Topology& t, const std::vector<RouteTable>& routes);

// Number of distinct routed paths from host `src` to host `dst` (product of ECMP choices).
std::uint64_t routed_path_count(const Topology& t, const std::vector<RouteTable>& routes, std::uint32_t src,
                                std::uint32_t dst);

}  // namespace fabricsim
