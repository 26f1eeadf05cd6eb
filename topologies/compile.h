#pragma once
// Topology -> Network: creates the endpoints, switches, ports and links, and loads
// every node's routing table (topologies/routing.h).
#include <memory>
#include <string>
#include <vector>

#include "sim/network.h"
#include "topologies/routing.h"
#include "topologies/topology.h"

namespace fabricsim {

struct NetworkOptions {
  NetworkParams params;
  // Per-class egress queue capacity when switches have no shared buffer.
  std::int64_t switch_queue_capacity_bytes = EgressPort::kUnlimited;
  // Torus dateline virtual channels (classes 0 and 1); needs two traffic classes.
  bool dateline = false;
  // A cluster's NICs (switches of role "nic") as RDMA endpoints (sim/endpoint/nic.h,
  // note_nic_port) rather than relays between PCIe and the wire.
  bool rdma_nics = false;
  // A split run (topologies/partition.h): one simulator per partition, and each
  // topology node's partition. Empty: everything runs on the simulator passed in.
  std::vector<Simulator*> partitions;
  std::vector<std::uint32_t> node_partition;
  // Threads that compile the routes (compute_routes): the same tables for any number.
  int route_threads = 1;
};

// The credits (bytes per class) a credit-based link grants: its own figure, or enough
// for line rate.
std::int64_t credit_bytes_for(const TopologyLink& l, const NicConfig& nic);

// Empty when the topology's structure is sound; else what is wrong, in words: an
// endpoint with no link or too many, a link without bandwidth.
std::string check_topology(const Topology& topology);

// Throws std::invalid_argument when check_topology finds a problem or some host
// cannot reach another. The topology's link i is the network's cable i
// (Network::cable(i): its two directions, a to b first).
std::unique_ptr<Network> compile_network(const Topology& topology, Simulator& sim, const NetworkOptions& options,
                                         const RoutingProgress& progress = {});

// The topology's name of a Network node.
const std::string& node_name(const Topology& topology, NodeRef n);

}  // namespace fabricsim
