// Group-keyed routing tables against a brute force: one Dijkstra per destination host
// (only switches relay) and every least-cost next hop in port order, for every node and
// every destination, on every example fabric and on custom graphs built to stress the
// grouping (dual-homed hosts, direct host cables, a NIC folded into its GPU).
#include <doctest/doctest.h>

#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <queue>
#include <span>
#include <vector>

#include "app/config/config_loader.h"
#include "app/scenario/memory_estimate.h"
#include "app/scenario/scenario.h"
#include "sim/net/route_table.h"
#include "topologies/compile.h"
#include "topologies/routing.h"

using namespace fabricsim;

namespace {

constexpr std::uint64_t kFar = UINT64_MAX;

// The per-host tables the simulator had before routes were keyed by group.
std::vector<std::vector<std::vector<PortIndex>>> brute_force(const Topology& t) {
  const auto adj = adjacency(t);
  const std::size_t n = t.nodes().size();
  std::vector<std::vector<std::vector<PortIndex>>> out(n, std::vector<std::vector<PortIndex>>(t.host_count()));
  std::vector<std::uint64_t> dist;
  for (std::uint32_t h = 0; h < t.host_count(); ++h) {
    const std::uint32_t dst = t.host_node(h);
    dist.assign(n, kFar);
    using Item = std::pair<std::uint64_t, std::uint32_t>;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> q;
    dist[dst] = 0;
    q.push({0, dst});
    while (!q.empty()) {
      const auto [d, u] = q.top();
      q.pop();
      if (d != dist[u] || (u != dst && t.node(u).kind == NodeKind::kHost)) continue;
      for (const Adjacent& a : adj[u]) {
        const std::uint64_t nd = d + t.links()[a.link].cost;
        if (nd < dist[a.node]) dist[a.node] = nd, q.push({nd, a.node});
      }
    }
    for (std::uint32_t u = 0; u < n; ++u) {
      if (u == dst || dist[u] == kFar) continue;
      for (const Adjacent& a : adj[u]) {
        const bool relays = a.node == dst || t.node(a.node).kind == NodeKind::kSwitch;
        if (relays && dist[a.node] != kFar && dist[a.node] + t.links()[a.link].cost == dist[u]) out[u][h].push_back(a.port);
      }
    }
  }
  return out;
}

// `cut`: the fabric is cut in two, and a host with one link is not compared toward hosts
// it cannot reach (its one port is set for every group; the run refuses such a fabric).
void check_same(const Topology& t, const Routes& routes, bool cut = false) {
  const auto expected = brute_force(t);
  const auto adj = adjacency(t);
  std::size_t mismatches = 0;
  for (std::uint32_t u = 0; u < t.nodes().size(); ++u) {
    for (std::uint32_t h = 0; h < t.host_count(); ++h) {
      if (cut && t.node(u).kind == NodeKind::kHost && adj[u].size() == 1 && expected[u][h].empty()) continue;
      const auto got = routes.to(u, h);
      if (!std::equal(got.begin(), got.end(), expected[u][h].begin(), expected[u][h].end()) && ++mismatches <= 5) {
        FAIL_CHECK("node " << t.node(u).name << " to host " << t.node(t.host_node(h)).name << ": " << got.size()
                           << " ports, expected " << expected[u][h].size());
      }
    }
  }
  CHECK(mismatches == 0);
}

// Links of the same bandwidth and latency, each (a, b, tier, cost).
struct Cable {
  std::uint32_t a, b;
  const char* tier;
  std::uint32_t cost = 1;
};
void connect_all(Topology& t, const LinkSpec& l, std::initializer_list<Cable> cables) {
  for (const Cable& c : cables) t.connect(c.a, c.b, l, c.tier, c.cost);
}

Topology example(const std::string& file) {
  const ScenarioRun run(load_config_file(std::string(FABRICSIM_SOURCE_DIR) + "/configs/" + file));
  return run.topology();
}

}  // namespace

TEST_CASE("grouped routes equal per-host least-cost routes on every example fabric") {
  for (const char* file : {"dumbbell.yaml", "fat_tree_k8.yaml", "dgx_h100_2node_rail.yaml", "dgx_h100_16node_rail.yaml",
                           "gb200_nvl72.yaml"}) {
    const std::string name = file;  // (torus examples route in dimension order: tests/test_topologies.cpp)
    CAPTURE(name);
    const Topology t = example(file);
    check_same(t, compute_routes(t));
  }
}

TEST_CASE("grouped routes compiled on several threads equal per-host least-cost routes, and the serial tables") {
  // The groups' Dijkstras run ahead on the threads (2 per thread in flight) while the
  // tables take them in group order: the k=8 fat-tree's 32 groups reuse every slot
  // several times over at 2, 3 and 5 threads.
  for (const char* file : {"fat_tree_k8.yaml", "dgx_h100_16node_rail.yaml", "torus_4x4x4.yaml"}) {
    const std::string name = file;
    CAPTURE(name);
    const Topology t = example(file);
    const Routes serial = compute_routes(t);
    for (const int threads : {2, 3, 5}) {
      CAPTURE(threads);
      const Routes split = compute_routes(t, {}, threads);
      // (A torus routes in dimension order, checked in tests/test_topologies.cpp.)
      if (name != "torus_4x4x4.yaml") check_same(t, split);
      REQUIRE(split.group_count == serial.group_count);
      CHECK(split.host_group == serial.host_group);
      REQUIRE(split.tables.size() == serial.tables.size());
      std::size_t differing = 0;
      for (std::size_t u = 0; u < serial.tables.size(); ++u) {
        const RouteTable& a = serial.tables[u];
        const RouteTable& b = split.tables[u];
        differing += a.set_offset != b.set_offset || a.ports != b.ports || a.by_group != b.by_group ||
                     a.default_set != b.default_set || a.first_host != b.first_host || a.by_host != b.by_host;
      }
      CHECK(differing == 0);
    }
  }
}

TEST_CASE("grouped routes: groups follow attachments (edge switch, rail leaf), not hosts") {
  const Topology ft = example("fat_tree_k8.yaml");
  const Routes r = compute_routes(ft);
  CHECK(r.group_count == 32);  // k^2/2 edge switches, k/2 = 4 hosts each
  // A GPU's NIC serves it alone and is its only way out: folded, so the 8 GPUs of a rail
  // (one per node, 16 nodes on one leaf per rail) share a group: 8 rails -> 8 groups.
  const Topology rail = example("dgx_h100_16node_rail.yaml");
  CHECK(compute_routes(rail).group_count == 8);
}

TEST_CASE("grouped routes equal per-host routes on custom graphs: dual-homed, cabled, folded") {
  const LinkSpec l{Bandwidth::gbps(100), ns(100)};
  Topology t;
  // Two switches in a ring of three with a spur; host a dual-homed to s0 and s1; hosts b
  // and c cabled directly and each on s2; host d behind a private switch p (folded) on s1
  // with a second, host-only switch x shared with e; e also on s2.
  const auto s0 = t.add_switch("s0"), s1 = t.add_switch("s1"), s2 = t.add_switch("s2"), p = t.add_switch("p"),
             x = t.add_switch("x");
  const auto a = t.add_host("a"), b = t.add_host("b"), c = t.add_host("c"), d = t.add_host("d"), e = t.add_host("e");
  connect_all(t, l, {{s0, s1, "fabric"}, {s1, s2, "fabric"}, {s2, s0, "fabric", 2}, {a, s0, "host"}, {a, s1, "host"},
                     {b, s2, "host"}, {c, s2, "host"}, {b, c, "cable", 3}, {d, p, "pcie", 4}, {p, s1, "host"},
                     {p, s0, "host"}, {d, x, "nvlink"}, {e, x, "nvlink"}, {e, s2, "host"}});
  const Routes r = compute_routes(t);
  CHECK(r.unreachable.empty());
  check_same(t, r);
}

TEST_CASE("grouped routes equal per-host routes where switch links cost more than one, by cost buckets and by the heap") {
  // Least costs between switches come from a bucket per cost where links cost at most 64
  // (Dial's) and from a heap above: both against the reference's Dijkstra, on a mesh with
  // equal-cost paths of different hop counts (s0 -> s3: s0-s1-s3 and s0-s2-s3 cost 3, and
  // s0-s4-s3 when `far` is 1 too) and an entry cost that is not a multiple of a link's.
  for (const std::uint32_t far : {1u, 3u, 65u, 200u}) {
    CAPTURE(far);
    const LinkSpec l{Bandwidth::gbps(100), ns(100)};
    Topology t;
    const auto s0 = t.add_switch("s0"), s1 = t.add_switch("s1"), s2 = t.add_switch("s2"), s3 = t.add_switch("s3"),
               s4 = t.add_switch("s4");
    // A spur s3 -6- s5 -1- s6 -4- s7: its hosts are reached only through s5 and s6,
    // each a costly link past the last switch before them.
    const auto s5 = t.add_switch("s5"), s6 = t.add_switch("s6"), s7 = t.add_switch("s7");
    const auto a = t.add_host("a"), b = t.add_host("b"), c = t.add_host("c"), d = t.add_host("d"), e = t.add_host("e"),
               f = t.add_host("f");
    connect_all(t, l, {{s0, s1, "fabric", 2}, {s1, s3, "fabric", 1}, {s0, s2, "fabric", 1}, {s2, s3, "fabric", 2},
                       {s0, s4, "fabric", far}, {s4, s3, "fabric", 2}, {s1, s2, "fabric", 5}, {s3, s5, "fabric", 6},
                       {s5, s6, "fabric", 1}, {s6, s7, "fabric", 4}, {a, s0, "host"}, {b, s3, "host", 7},
                       {c, s4, "host"}, {c, s2, "host", 2}, {d, s1, "host", 3}, {e, s6, "host"}, {f, s7, "host", 2}});
    const Routes r = compute_routes(t);
    CHECK(r.unreachable.empty());
    check_same(t, r);
  }
}

TEST_CASE("grouped routes equal per-host routes where a one-neighbour switch is entered, a host has parallel links, and an island is cut off") {
  // The route compiler skips, group after group, a node whose relaying links all go to one
  // node (a GPU's NIC, a NIC's leaf). Here that rule meets its exceptions: stub switch q
  // (one relaying neighbour, s0) is where host g enters the fabric beside s2, so g's group
  // enters at q; host h has two links of different cost to s1; and in a second build an
  // island (switch s3 with hosts i and j) leaves groups that do not reach every switch.
  const LinkSpec l{Bandwidth::gbps(100), ns(100)};
  for (const bool island : {false, true}) {
    CAPTURE(island);
    Topology t;
    const auto s0 = t.add_switch("s0"), s1 = t.add_switch("s1"), s2 = t.add_switch("s2"), q = t.add_switch("q");
    const auto f = t.add_host("f"), g = t.add_host("g"), h = t.add_host("h"), k = t.add_host("k");
    connect_all(t, l, {{s0, s1, "fabric"}, {s1, s2, "fabric"}, {q, s0, "fabric", 2}, {f, q, "host"}, {g, q, "host"},
                       {g, s2, "host"}, {h, s1, "host"}, {h, s1, "host", 2}, {k, s2, "host"}});
    if (island) {
      const auto s3 = t.add_switch("s3");
      const auto i = t.add_host("i"), j = t.add_host("j");
      connect_all(t, l, {{i, s3, "host"}, {j, s3, "host"}});
    }
    const Routes r = compute_routes(t);
    CHECK(r.unreachable.empty() == !island);
    check_same(t, r, island);
    // On two threads: the same tables, and the same first unreachable pair.
    const Routes split = compute_routes(t, {}, 2);
    CHECK(split.unreachable == r.unreachable);
    check_same(t, split, island);
    // By hand, ports in cable order: q's are s0, f, g, so it reaches g (host 1) by port 2
    // and k (host 3) up through s0, port 0; h's two cables to s1 are ports 0 (cost 1) and
    // 1 (cost 2), and it leaves by the cheaper one only.
    const auto ports = [&](std::uint32_t node, HostId to) {
      const auto p = r.to(node, to);
      return std::vector<PortIndex>(p.begin(), p.end());
    };
    CHECK(ports(q, 1) == std::vector<PortIndex>{2});
    CHECK(ports(q, 3) == std::vector<PortIndex>{0});
    CHECK(ports(h, 3) == std::vector<PortIndex>{0});
  }
}

TEST_CASE("memory estimate: packets in flight are the workload's when buffers could hold more (hand count)") {
  // k=8 fat-tree, 128 hosts each sending 2,000,000 B in 4000 B packets: 128 x 500 = 64,000
  // packets, while 80 switches of 32 MiB shared buffer could hold 80 x 8256 of 4064 B.
  const ScenarioConfig c = load_config_file(std::string(FABRICSIM_SOURCE_DIR) + "/configs/scale/fat_tree_k8_permutation.yaml");
  const ScenarioRun run(c);
  CHECK(run.memory_estimate().packets_in_flight == 64000);
  // The routes: 80 switches x 32 groups x 4 B of group entries are part of it.
  CHECK(run.memory_estimate().routes >= 80u * 32u * 4u);
}

TEST_CASE("memory estimate over MPI processes: each holds its share of the packets and gathers two processes' counters") {
  // Every process builds the whole network; the packets in flight are split among them.
  // k=8 permutation over two processes: 64,000 / 2 packets each; the end-of-run gather
  // holds this process's counters and one other's, 2/2 of every port's, endpoint's and
  // switch's (k=8: 3 x 128 links, 768 directions; 128 hosts; 80 switches).
  struct TwoProcesses final : ProcessGroup {
    int rank() const override { return 0; }
    int size() const override { return 2; }
    std::vector<Bytes> exchange(const std::vector<Bytes>&) override { return {}; }
    void all_min(std::vector<std::int64_t>&) override {}
    void all_sum(std::vector<std::int64_t>&) override {}
    [[noreturn]] void abort(int) override { std::abort(); }
  };
  ScenarioConfig c = load_config_file(std::string(FABRICSIM_SOURCE_DIR) + "/configs/scale/fat_tree_k8_permutation.yaml");
  const Topology t = build_topology(c.topology);
  const MemoryEstimate one = estimate_memory(c, t);
  TwoProcesses two;
  c.processes = &two;
  const MemoryEstimate each = estimate_memory(c, t);
  CHECK(one.packets_in_flight == 64000);
  CHECK(each.packets_in_flight == 32000);
  CHECK(each.packets == one.packets / 2);
  CHECK(each.network == one.network);
  CHECK(each.results - one.results == 768 * sizeof(PortCounters) + 128 * sizeof(NicCounters) + 80 * sizeof(SwitchCounters));
}

TEST_CASE("a route table's checked lookup agrees with the plain one and refuses stale indexes") {
  // Hand-built: sets {} (0), {3, 5} (1), {7} (2); groups 0 and 1 take sets 1 and 2; the
  // exception window holds hosts 10 (set 2) and 11 (none: its group's entry holds).
  RouteTable t;
  t.set_offset = {0, 0, 2, 3};
  t.ports = {3, 5, 7};
  t.by_group = {1, 2};
  t.first_host = 10;
  t.by_host = {2, RouteTable::kNoException};
  const auto ports = [](std::span<const PortIndex> s) { return std::vector<PortIndex>(s.begin(), s.end()); };
  CHECK(ports(t.to_checked(10, 0)) == std::vector<PortIndex>{7});     // the host's exception
  CHECK(ports(t.to_checked(11, 0)) == std::vector<PortIndex>{3, 5});  // no exception: its group
  CHECK(ports(t.to_checked(20, 1)) == std::vector<PortIndex>{7});     // outside the window
  CHECK(ports(t.to_checked(20, 1)) == ports(t.to(20, 1)));
  CHECK(t.to_checked(20, 2).empty());  // a group past the table
  t.by_host[1] = 9;                    // a set past the table
  CHECK(t.to_checked(11, 0).empty());
}
