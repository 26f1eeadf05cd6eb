#include "topologies/analysis.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#include <cstdio>
#include <deque>
#include <limits>
#include <queue>

#include "sim/core/units.h"

#include "topologies/routing.h"

namespace fabricsim {
namespace {

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS,
    boost::property<boost::vertex_index_t, long,
                    boost::property<boost::vertex_color_t, boost::default_color_type,
                                    boost::property<boost::vertex_distance_t, long,
                                                    boost::property<boost::vertex_predecessor_t, FlowTraits::edge_descriptor>>>>,
    boost::property<boost::edge_capacity_t, long,
                    boost::property<boost::edge_residual_capacity_t, long,
                                    boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

// Capacities in Mb/s keep sums of thousands of multi-Tb/s links far inside a long.
constexpr double kUnit = 1e6;

void add_arc(FlowGraph& g, std::size_t u, std::size_t v, long capacity) {
  auto cap = boost::get(boost::edge_capacity, g);
  auto rev = boost::get(boost::edge_reverse, g);
  const auto e = boost::add_edge(u, v, g).first;
  const auto r = boost::add_edge(v, u, g).first;
  cap[e] = capacity;
  cap[r] = 0;
  rev[e] = r;
  rev[r] = e;
}

int switch_diameter(const Topology& t) {
  const auto adj = adjacency(t);
  int diameter = 0;
  std::vector<int> dist(t.nodes().size());
  for (std::uint32_t s = 0; s < t.switch_count(); ++s) {
    std::fill(dist.begin(), dist.end(), -1);
    const std::uint32_t start = t.switch_node(s);
    std::deque<std::uint32_t> q{start};
    dist[start] = 0;
    while (!q.empty()) {
      const std::uint32_t u = q.front();
      q.pop_front();
      diameter = std::max(diameter, dist[u]);
      for (const Adjacent& a : adj[u]) {
        if (dist[a.node] < 0 && t.node(a.node).kind == NodeKind::kSwitch) {
          dist[a.node] = dist[u] + 1;
          q.push_back(a.node);
        }
      }
    }
  }
  return diameter;
}

}  // namespace

double min_cut_bandwidth(const Topology& t, const std::vector<std::uint32_t>& a_hosts,
                         const std::vector<std::uint32_t>& b_hosts) {
  const std::size_t n = t.nodes().size();
  FlowGraph g(n + 2);
  const std::size_t source = n, sink = n + 1;
  std::vector<int> side(n, 0);  // endpoints: 1 in a, 2 in b, 0 neither (silent)
  for (std::uint32_t h : a_hosts) side[t.host_node(h)] = 1;
  for (std::uint32_t h : b_hosts) side[t.host_node(h)] = 2;
  long total = 0;
  for (const TopologyLink& l : t.links()) total += 2 * static_cast<long>(static_cast<double>(l.bandwidth.bits_per_second) / kUnit);
  const long unlimited = total + 1;
  // An endpoint never relays: those in `a` only send, those in `b` only receive, others neither.
  const auto may_send = [&](std::uint32_t u) { return t.node(u).kind == NodeKind::kSwitch || side[u] == 1; };
  const auto may_receive = [&](std::uint32_t u) { return t.node(u).kind == NodeKind::kSwitch || side[u] == 2; };
  for (const TopologyLink& l : t.links()) {
    const long c = static_cast<long>(static_cast<double>(l.bandwidth.bits_per_second) / kUnit);
    if (may_send(l.a) && may_receive(l.b)) add_arc(g, l.a, l.b, c);
    if (may_send(l.b) && may_receive(l.a)) add_arc(g, l.b, l.a, c);
  }
  for (std::uint32_t h : a_hosts) add_arc(g, source, t.host_node(h), unlimited);
  for (std::uint32_t h : b_hosts) add_arc(g, t.host_node(h), sink, unlimited);
  const long flow = boost::boykov_kolmogorov_max_flow(g, source, sink);
  return static_cast<double>(flow) * kUnit;
}

TopologySummary summarize(const Topology& t) {
  TopologySummary s;
  s.endpoints = t.host_count();
  for (const TopologyNode& node : t.nodes()) ++s.nodes_by_role[node.role];
  s.gpus = t.count_role("gpu");
  s.nics = t.count_role("nic");
  s.switches = t.switch_count() - s.nics;
  s.links = t.links().size();
  for (const TopologyLink& l : t.links()) ++s.links_by_tier[l.tier];
  if (t.host_count() <= kMaxDiameterEndpoints) {
    const auto routes = compute_routes(t);
    for (const auto& row : routed_hops(t, routes)) {
      for (int h : row) s.diameter_hops = std::max(s.diameter_hops, h);
    }
  } else {
    s.diameter_hops = -1;
  }
  s.switch_diameter_hops = switch_diameter(t);
  std::vector<std::uint32_t> a, b;
  for (std::uint32_t h = 0; h < t.host_count(); ++h) (h < t.host_count() / 2 ? a : b).push_back(h);
  s.bisection_bandwidth_bps = min_cut_bandwidth(t, a, b);
  return s;
}

std::string to_dot(const Topology& t) {
  std::string out = "graph fabric {\n  node [fontsize=10];\n";
  for (const TopologyNode& n : t.nodes()) {
    out += "  \"" + n.name + "\" [shape=" + (n.kind == NodeKind::kHost ? "box" : "ellipse") + ", tooltip=\"" + n.role + "\"];\n";
  }
  char bw[32];
  for (const TopologyLink& l : t.links()) {
    std::snprintf(bw, sizeof bw, "%g", l.bandwidth.gbps_value());
    out += "  \"" + t.node(l.a).name + "\" -- \"" + t.node(l.b).name + "\" [label=\"" + bw + "G\", tooltip=\"" + l.tier + "\"];\n";
  }
  out += "}\n";
  return out;
}

}  // namespace fabricsim

namespace fabricsim {

Time largest_base_rtt(const Topology& t, std::int64_t packet_bytes, std::int64_t ack_bytes) {
  const std::size_t n = t.nodes().size();
  std::vector<std::vector<std::pair<std::uint32_t, Time>>> adjacent(n);
  for (const TopologyLink& l : t.links()) {
    const Time w = 2 * l.latency + serialization(packet_bytes, l.bandwidth) + serialization(ack_bytes, l.bandwidth);
    adjacent[l.a].push_back({l.b, w});
    adjacent[l.b].push_back({l.a, w});
  }
  // Farthest endpoint from `from` (endpoints do not relay) and its distance.
  const auto farthest = [&](std::uint32_t from) {
    std::vector<Time> dist(n, kTimeMax);
    using Item = std::pair<Time, std::uint32_t>;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> open;
    dist[from] = 0;
    open.push({0, from});
    while (!open.empty()) {
      const auto [d, v] = open.top();
      open.pop();
      if (d > dist[v] || (v != from && t.node(v).kind == NodeKind::kHost)) continue;
      for (const auto& [w, cost] : adjacent[v]) {
        if (d + cost < dist[w]) {
          dist[w] = d + cost;
          open.push({dist[w], w});
        }
      }
    }
    std::pair<std::uint32_t, Time> best{from, 0};
    for (std::uint32_t h = 0; h < t.host_count(); ++h) {
      const std::uint32_t v = t.host_node(h);
      if (dist[v] != kTimeMax && dist[v] > best.second) best = {v, dist[v]};
    }
    return best;
  };
  if (t.host_count() == 0) return 0;
  return farthest(farthest(t.host_node(0)).first).second;
}

}  // namespace fabricsim
