#include "topologies/compile.h"

#include <limits>
#include <stdexcept>

namespace fabricsim {
namespace {

struct Adjacent {
  std::uint32_t node;
  PortIndex port;  // port number at the near end
};

// Ports are numbered per node in link order, as Network::connect numbers them.
std::vector<std::vector<Adjacent>> adjacency(const Topology& t) {
  std::vector<std::vector<Adjacent>> adj(t.nodes().size());
  for (const TopologyLink& l : t.links()) {
    adj[l.a].push_back({l.b, static_cast<PortIndex>(adj[l.a].size())});
    adj[l.b].push_back({l.a, static_cast<PortIndex>(adj[l.b].size())});
  }
  return adj;
}

}  // namespace

RoutingTables compute_shortest_path_routes(const Topology& t) {
  const auto adj = adjacency(t);
  const std::size_t n = t.nodes().size();
  RoutingTables tables(t.switch_count(), std::vector<std::vector<PortIndex>>(t.host_count()));
  constexpr std::uint32_t kUnreached = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> dist(n);
  std::vector<std::uint32_t> frontier;
  for (std::uint32_t h = 0; h < t.host_count(); ++h) {
    const std::uint32_t dst = t.host_node(h);
    std::fill(dist.begin(), dist.end(), kUnreached);
    dist[dst] = 0;
    frontier.assign(1, dst);
    // BFS outward from the destination; only switches relay.
    for (std::size_t head = 0; head < frontier.size(); ++head) {
      const std::uint32_t u = frontier[head];
      if (u != dst && t.node(u).kind == NodeKind::kHost) continue;
      for (const Adjacent& a : adj[u]) {
        if (dist[a.node] == kUnreached) {
          dist[a.node] = dist[u] + 1;
          frontier.push_back(a.node);
        }
      }
    }
    for (std::uint32_t s = 0; s < t.switch_count(); ++s) {
      const std::uint32_t u = t.switch_node(s);
      if (dist[u] == kUnreached) continue;
      for (const Adjacent& a : adj[u]) {
        const bool relays = a.node == dst || t.node(a.node).kind == NodeKind::kSwitch;
        if (relays && dist[a.node] + 1 == dist[u]) tables[s][h].push_back(a.port);
      }
    }
  }
  return tables;
}

static std::string find_unreachable(const Topology& t, const RoutingTables& tables) {
  for (std::uint32_t h = 0; h < t.host_count(); ++h) {
    // Every switch must reach every host: a fabric in pieces is a config mistake.
    for (std::uint32_t s = 0; s < t.switch_count(); ++s) {
      if (tables[s][h].empty()) {
        return "host '" + t.node(t.host_node(h)).name + "' cannot be reached from switch '" +
               t.node(t.switch_node(s)).name + "'";
      }
    }
  }
  return {};
}

std::string check_topology(const Topology& t) {
  std::vector<int> host_links(t.host_count(), 0);
  for (const TopologyLink& l : t.links()) {
    const bool a_host = t.node(l.a).kind == NodeKind::kHost, b_host = t.node(l.b).kind == NodeKind::kHost;
    if (a_host) ++host_links[t.node(l.a).kind_index];
    if (b_host) ++host_links[t.node(l.b).kind_index];
    if (a_host && b_host && t.host_count() != 2) {
      return "hosts '" + t.node(l.a).name + "' and '" + t.node(l.b).name +
             "' are cabled back to back, which works only when they are the only two hosts";
    }
    if (l.bandwidth.bits_per_second <= 0) return "a link needs a positive bandwidth";
    if (l.latency < 0) return "a link latency must not be negative";
  }
  for (std::uint32_t h = 0; h < t.host_count(); ++h) {
    if (host_links[h] != 1) {
      return "host '" + t.node(t.host_node(h)).name + "' has " + std::to_string(host_links[h]) +
             " links; a host has exactly one NIC port";
    }
  }
  return {};
}

std::unique_ptr<Network> compile_network(const Topology& t, Simulator& sim, const NetworkOptions& options) {
  if (std::string problem = check_topology(t); !problem.empty()) throw std::invalid_argument(problem);
  auto net = std::make_unique<Network>(sim, options.params);
  for (std::size_t h = 0; h < t.host_count(); ++h) net->add_host();
  for (std::size_t s = 0; s < t.switch_count(); ++s) net->add_switch();
  const auto ref = [&](std::uint32_t node) {
    const TopologyNode& n = t.node(node);
    return n.kind == NodeKind::kHost ? NodeRef::host(n.kind_index) : NodeRef::sw(n.kind_index);
  };
  for (const TopologyLink& l : t.links()) {
    net->connect(ref(l.a), ref(l.b), l.bandwidth, l.latency, options.switch_queue_capacity_bytes);
  }
  const RoutingTables tables = compute_shortest_path_routes(t);
  if (std::string problem = find_unreachable(t, tables); !problem.empty()) throw std::invalid_argument(problem);
  for (std::uint32_t s = 0; s < t.switch_count(); ++s) net->switch_at(s).set_routes(tables[s]);
  return net;
}

const std::string& node_name(const Topology& t, NodeRef n) {
  return t.node(n.kind == NodeRef::Kind::kHost ? t.host_node(n.index) : t.switch_node(n.index)).name;
}

}  // namespace fabricsim
