#pragma once
// What a topology is, in numbers: nodes by role, links by tier, diameters, and the
// bisection bandwidth computed from the graph as a min cut (Boost.Graph max-flow), so it
// holds for any fabric, regular or not. Also a Graphviz rendering.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "topologies/topology.h"

namespace fabricsim {

inline constexpr std::size_t kMaxDiameterEndpoints = 16384;

struct TopologySummary {
  std::size_t endpoints = 0;  // hosts or GPUs: what workloads address
  std::size_t gpus = 0;
  std::size_t switches = 0;   // switches and NVSwitch chips (NICs, which also forward, counted apart)
  std::size_t nics = 0;
  std::size_t links = 0;
  std::map<std::string, std::size_t> nodes_by_role;
  std::map<std::string, std::size_t> links_by_tier;
  // Most links on a routed path between two endpoints; -1 when not worked out (above
  // kMaxDiameterEndpoints: it follows every pair of endpoints).
  int diameter_hops = 0;
  int switch_diameter_hops = 0;  // most links on a shortest switch-only path between two switches
  double bisection_bandwidth_bps = 0;  // min cut, one direction, first half of endpoints to second
};

TopologySummary summarize(const Topology& t);

// Max flow, in bits per second, from the endpoints in `a` to those in `b` with every
// cable carrying its bandwidth in each direction and endpoints never relaying: the
// capacity of the narrowest cut between the two sets.
double min_cut_bandwidth(const Topology& t, const std::vector<std::uint32_t>& a_hosts,
                         const std::vector<std::uint32_t>& b_hosts);

// The fabric's largest base round trip: a data packet of `packet_bytes` out and an ack
// of `ack_bytes` back over the same links, no queueing, store-and-forward at each hop,
// between the two endpoints farthest apart. Found by a double sweep (the endpoint
// farthest from endpoint 0, then the one farthest from it), exact on trees and on the
// symmetric fabrics the builders make: two Dijkstra passes at any size. HPCC's ns-3 model
// uses such a global T (GLOBAL_T).
Time largest_base_rtt(const Topology& t, std::int64_t packet_bytes, std::int64_t ack_bytes);

// Graphviz: endpoints as boxes, switches as ellipses, one edge per cable labelled with
// its bandwidth.
std::string to_dot(const Topology& t);

}  // namespace fabricsim
