#pragma once
// Topology -> Network: creates the NICs, switches, ports and links, and fills every
// switch's routing table with all shortest paths (ECMP sets) found by a BFS from each
// destination host. Hosts never forward, so paths run switch to switch.
#include <memory>
#include <string>
#include <vector>

#include "sim/network.h"
#include "topologies/topology.h"

namespace fabricsim {

struct NetworkOptions {
  NetworkParams params;
  std::int64_t switch_queue_capacity_bytes = EgressPort::kUnlimited;
};

// For each switch, for each destination host, the equal-cost next-hop ports (port
// numbers in the order the switch's links appear in the topology).
using RoutingTables = std::vector<std::vector<std::vector<PortIndex>>>;
RoutingTables compute_shortest_path_routes(const Topology& topology);

// Empty when the topology can be compiled; else what is wrong, in words: a host without
// exactly one link, a bad link. (compile_network also rejects unreachable hosts.)
std::string check_topology(const Topology& topology);

// Throws std::invalid_argument with check_topology's words when it finds a problem.
std::unique_ptr<Network> compile_network(const Topology& topology, Simulator& sim, const NetworkOptions& options);

// The topology's name of a Network node.
const std::string& node_name(const Topology& topology, NodeRef n);

}  // namespace fabricsim
