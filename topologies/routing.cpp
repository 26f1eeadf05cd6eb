#include "topologies/routing.h"

#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>

namespace fabricsim {

std::vector<std::vector<Adjacent>> adjacency(const Topology& t) {
  std::vector<std::vector<Adjacent>> adj(t.nodes().size());
  for (std::uint32_t i = 0; i < t.links().size(); ++i) {
    const TopologyLink& l = t.links()[i];
    adj[l.a].push_back({l.b, i, static_cast<PortIndex>(adj[l.a].size())});
    adj[l.b].push_back({l.a, i, static_cast<PortIndex>(adj[l.b].size())});
  }
  return adj;
}

namespace {

// Tables are built destination by destination; this gathers them per node.
struct TableBuilder {
  std::vector<std::vector<std::vector<PortIndex>>> per_node;  // [node][dst]
  TableBuilder(std::size_t nodes, std::size_t hosts) : per_node(nodes, std::vector<std::vector<PortIndex>>(hosts)) {}
  std::vector<RouteTable> finish() {
    std::vector<RouteTable> out(per_node.size());
    for (std::size_t n = 0; n < per_node.size(); ++n) {
      RouteTable& r = out[n];
      r.offset.reserve(per_node[n].size() + 1);
      for (const auto& ports : per_node[n]) {
        r.offset.push_back(static_cast<std::uint32_t>(r.ports.size()));
        r.ports.insert(r.ports.end(), ports.begin(), ports.end());
      }
      r.offset.push_back(static_cast<std::uint32_t>(r.ports.size()));
      per_node[n].clear();
      per_node[n].shrink_to_fit();
    }
    return out;
  }
};

constexpr std::uint64_t kUnreached = std::numeric_limits<std::uint64_t>::max();

// Least cost from every node to `dst`, where only switches (and dst itself) relay.
void costs_to(const Topology& t, const std::vector<std::vector<Adjacent>>& adj, std::uint32_t dst,
              std::vector<std::uint64_t>& dist) {
  dist.assign(t.nodes().size(), kUnreached);
  using Item = std::pair<std::uint64_t, std::uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> frontier;
  dist[dst] = 0;
  frontier.push({0, dst});
  while (!frontier.empty()) {
    const auto [d, u] = frontier.top();
    frontier.pop();
    if (d != dist[u]) continue;
    if (u != dst && t.node(u).kind == NodeKind::kHost) continue;  // endpoints never relay
    for (const Adjacent& a : adj[u]) {
      const std::uint64_t nd = d + t.links()[a.link].cost;
      if (nd < dist[a.node]) {
        dist[a.node] = nd;
        frontier.push({nd, a.node});
      }
    }
  }
}

void least_cost_next_hops(const Topology& t, const std::vector<std::vector<Adjacent>>& adj, std::uint32_t dst,
                          const std::vector<std::uint64_t>& dist, std::uint32_t u, std::vector<PortIndex>& out) {
  if (u == dst || dist[u] == kUnreached) return;
  for (const Adjacent& a : adj[u]) {
    const bool relays = a.node == dst || t.node(a.node).kind == NodeKind::kSwitch;
    if (relays && dist[a.node] != kUnreached && dist[a.node] + t.links()[a.link].cost == dist[u]) {
      out.push_back(a.port);
    }
  }
}

}  // namespace

std::vector<RouteTable> shortest_path_routes(const Topology& t) {
  const auto adj = adjacency(t);
  TableBuilder tables(t.nodes().size(), t.host_count());
  std::vector<std::uint64_t> dist;
  for (std::uint32_t h = 0; h < t.host_count(); ++h) {
    const std::uint32_t dst = t.host_node(h);
    costs_to(t, adj, dst, dist);
    for (std::uint32_t u = 0; u < t.nodes().size(); ++u) least_cost_next_hops(t, adj, dst, dist, u, tables.per_node[u][h]);
  }
  return tables.finish();
}

std::vector<RouteTable> dimension_order_routes(const Topology& t) {
  if (!t.torus()) throw std::logic_error("dimension-order routing needs a torus layout");
  const TorusLayout& torus = *t.torus();
  const auto adj = adjacency(t);
  TableBuilder tables(t.nodes().size(), t.host_count());
  const auto is_torus = [&](std::uint32_t u) { return t.node(u).role == "torus"; };
  std::vector<std::uint64_t> dist;
  for (std::uint32_t h = 0; h < t.host_count(); ++h) {
    const std::uint32_t dst = t.host_node(h);
    costs_to(t, adj, dst, dist);
    // The torus switch the destination hangs off (directly, or through its NIC): the
    // nearest one. Everything off the torus routes by least cost.
    std::uint32_t attach = 0;
    std::uint64_t best = kUnreached;
    for (std::uint32_t u = 0; u < t.nodes().size(); ++u) {
      if (is_torus(u) && dist[u] < best) {
        best = dist[u];
        attach = u;
      }
    }
    for (std::uint32_t u = 0; u < t.nodes().size(); ++u) {
      std::vector<PortIndex>& out = tables.per_node[u][h];
      if (!is_torus(u) || u == attach || best == kUnreached) {
        least_cost_next_hops(t, adj, dst, dist, u, out);
        continue;
      }
      const auto& here = torus.switch_coords[t.node(u).kind_index];
      const auto& there = torus.switch_coords[t.node(attach).kind_index];
      for (int d = 0; d < 3; ++d) {
        if (here[d] == there[d]) continue;
        const int k = torus.dims[d];
        const int forward = ((there[d] - here[d]) % k + k) % k;
        const int step = forward <= k - forward ? 1 : -1;
        auto c = here;
        c[d] = ((c[d] + step) % k + k) % k;
        const std::uint32_t next =
            t.switch_node(torus.switch_at[static_cast<std::size_t>(c[0] + torus.dims[0] * (c[1] + torus.dims[1] * c[2]))]);
        for (const Adjacent& a : adj[u]) {
          if (a.node == next) {
            out.push_back(a.port);
            break;  // one path: with two parallel links (a ring of 2) take the first
          }
        }
        break;
      }
    }
  }
  return tables.finish();
}

std::vector<RouteTable> compute_routes(const Topology& t) {
  return t.routing() == RoutingScheme::kDimensionOrder ? dimension_order_routes(t) : shortest_path_routes(t);
}

std::vector<std::vector<int>> routed_hops(const Topology& t, const std::vector<RouteTable>& routes) {
  const auto adj = adjacency(t);
  const std::size_t hosts = t.host_count();
  std::vector<std::vector<int>> hops(hosts, std::vector<int>(hosts, -1));
  // For each destination, hops from every node by following the tables (any choice in
  // an ECMP set has the same hop count under unit costs; we take the first).
  std::vector<int> memo(t.nodes().size());
  for (std::uint32_t h = 0; h < hosts; ++h) {
    const std::uint32_t dst = t.host_node(h);
    std::fill(memo.begin(), memo.end(), -2);  // -2: not computed
    std::function<int(std::uint32_t, int)> walk = [&](std::uint32_t u, int depth) -> int {
      if (u == dst) return 0;
      if (memo[u] != -2) return memo[u];
      if (depth > static_cast<int>(t.nodes().size())) return memo[u] = -1;  // a loop: report unreachable
      const auto ports = routes[u].to(h);
      if (ports.empty()) return memo[u] = -1;
      const int rest = walk(adj[u][ports[0]].node, depth + 1);
      return memo[u] = rest < 0 ? -1 : rest + 1;
    };
    for (std::uint32_t s = 0; s < hosts; ++s) hops[s][h] = s == h ? 0 : walk(t.host_node(s), 0);
  }
  return hops;
}

std::uint64_t routed_path_count(const Topology& t, const std::vector<RouteTable>& routes, std::uint32_t src,
                                std::uint32_t dst) {
  const auto adj = adjacency(t);
  std::vector<std::int64_t> memo(t.nodes().size(), -1);
  const std::uint32_t target = t.host_node(dst);
  std::function<std::uint64_t(std::uint32_t)> count = [&](std::uint32_t u) -> std::uint64_t {
    if (u == target) return 1;
    if (memo[u] >= 0) return static_cast<std::uint64_t>(memo[u]);
    std::uint64_t total = 0;
    for (PortIndex p : routes[u].to(dst)) total += count(adj[u][p].node);
    memo[u] = static_cast<std::int64_t>(total);
    return total;
  };
  return count(t.host_node(src));
}

}  // namespace fabricsim
