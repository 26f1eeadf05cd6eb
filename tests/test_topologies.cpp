// Topologies against hand counts and closed forms.
#include <doctest/doctest.h>

#include <cmath>

#include "test_support.h"

#include <numeric>
#include <stdexcept>

#include "sim/core/units.h"
#include "topologies/analysis.h"
#include "topologies/fat_tree.h"
#include "topologies/leaf_spine.h"
#include "topologies/oversubscription.h"
#include "topologies/cluster.h"
#include "topologies/compile.h"
#include "topologies/routing.h"

using namespace fabricsim;

namespace {
LinkSpec link(std::int64_t gbps, Time latency = ns(100)) { return {Bandwidth::gbps(gbps), latency}; }

FatTreeSpec fat_tree(int k) {
  FatTreeSpec s;
  s.k = k;
  s.host_link = s.edge_link = s.core_link = link(100);
  return s;
}

std::vector<std::uint32_t> range(std::uint32_t from, std::uint32_t to) {
  std::vector<std::uint32_t> v(to - from);
  std::iota(v.begin(), v.end(), from);
  return v;
}
}  // namespace

TEST_CASE("k-ary fat-trees: k^3/4 hosts, 5k^2/4 switches, 2/4/6 hops, (k/2)^2 paths between pods") {
  for (const auto& [k, hosts, switches] : {std::tuple{4, 16, 20}, std::tuple{8, 128, 80}}) {
    CAPTURE(k);
    const Topology t = fat_tree_topology(fat_tree(k));
    CHECK(t.host_count() == static_cast<std::size_t>(hosts));
    CHECK(t.switch_count() == static_cast<std::size_t>(switches));
    // Links: k^3/4 host links + k pods * (k/2)^2 edge-agg + k * (k/2)^2 agg-core.
    CHECK(t.links().size() == static_cast<std::size_t>(hosts + 2 * k * (k / 2) * (k / 2)));
    const auto routes = compute_routes(t);
    const auto hops = routed_hops(t, routes);
    const int half = k / 2;
    for (std::uint32_t a = 0; a < t.host_count(); ++a) {
      for (std::uint32_t b = 0; b < t.host_count(); ++b) {
        if (a == b) continue;
        const bool same_edge = a / half == b / half;
        const bool same_pod = a / (half * half) == b / (half * half);
        const int expected = same_edge ? 2 : same_pod ? 4 : 6;
        if (hops[a][b] != expected) FAIL_CHECK("hosts " << a << " and " << b << ": " << hops[a][b] << " hops");
      }
    }
    // Host 0 (pod 0) to the last host (last pod): every agg x every core of it.
    CHECK(routed_path_count(t, routes, 0, static_cast<std::uint32_t>(hosts - 1)) == static_cast<std::uint64_t>(half * half));
    // Same pod, other edge: one path per aggregation switch.
    CHECK(routed_path_count(t, routes, 0, static_cast<std::uint32_t>(half)) == static_cast<std::uint64_t>(half));
  }
}

TEST_CASE("a compiled fabric's cable i is the topology's link i, a to b first") {
  // k=4: 16 hosts, 20 switches, 48 links; faults and what-if runs name links by index.
  const Topology t = fat_tree_topology(fat_tree(4));
  Simulator sim(1);
  const std::unique_ptr<Network> net = compile_network(t, sim, {});
  REQUIRE(t.links().size() == 48);
  REQUIRE(net->cable_count() >= t.links().size());
  for (std::size_t i = 0; i < t.links().size(); ++i) {
    const auto [ab, ba] = net->cable(i);
    const LinkDirection& there = net->directions()[ab];
    const LinkDirection& back = net->directions()[ba];
    CHECK(node_name(t, there.from) == t.node(t.links()[i].a).name);
    CHECK(node_name(t, there.to) == t.node(t.links()[i].b).name);
    CHECK(node_name(t, back.from) == t.node(t.links()[i].b).name);
    CHECK(node_name(t, back.to) == t.node(t.links()[i].a).name);
  }
}

TEST_CASE("a compiled fabric's switches hold their ports side by side, in port order") {
  // k=4: every switch has k = 4 ports, at a fixed stride from its first.
  Simulator sim(1);
  const std::unique_ptr<Network> net = compile_network(fat_tree_topology(fat_tree(4)), sim, {});
  REQUIRE(net->switch_count() == 20);
  for (std::uint32_t s = 0; s < net->switch_count(); ++s) {
    const Switch& sw = net->switch_at(s);
    REQUIRE(sw.port_count() == 4);
    for (PortIndex i = 0; i < 4; ++i) CHECK(&sw.port(i) == &sw.port(0) + i);
  }
}

TEST_CASE("a switch given more links than it reserved ports for keeps the rest apart") {
  Simulator sim(1);
  Network net(sim, NetworkParams{});
  for (int h = 0; h < 3; ++h) net.add_host();
  const std::uint32_t s = net.add_switch();
  net.reserve_switch_ports(s, 2);
  for (HostId h = 0; h < 3; ++h) net.connect(NodeRef::host(h), NodeRef::sw(s), Bandwidth::gbps(100), ns(100), 1 << 20);
  const Switch& sw = net.switch_at(s);
  REQUIRE(sw.port_count() == 3);
  // The third is not at the stride; each port still sends on its own link, to its host.
  CHECK(&sw.port(2) != &sw.port(0) + 2);
  for (PortIndex i = 0; i < 3; ++i) CHECK(sw.port(i).link() == net.directions()[2 * i + 1].link);
  CHECK_THROWS_AS(net.reserve_switch_ports(s, 4), std::logic_error);
}

TEST_CASE("4x4x4 torus: 64 nodes, 192 links, diameter 6, dimension-order paths = sum of ring distances") {
  Torus3dSpec spec;
  spec.dims = {4, 4, 4};
  spec.dim_links = {link(100), link(100), link(100)};
  spec.host_link = link(400);
  const Topology t = torus3d_topology(spec);
  const TopologySummary s = summarize(t);
  CHECK(t.switch_count() == 64);
  CHECK(s.links_by_tier.at("torus-x") + s.links_by_tier.at("torus-y") + s.links_by_tier.at("torus-z") == 192);
  CHECK(s.switch_diameter_hops == 6);
  const auto routes = compute_routes(t);
  const auto hops = routed_hops(t, routes);
  const TorusLayout& layout = *t.torus();
  for (std::uint32_t a = 0; a < 64; ++a) {
    for (std::uint32_t b = 0; b < 64; ++b) {
      if (a == b) continue;
      // Host i hangs off switch i: two host links plus the ring distances.
      const int expected = 2 + torus_distance(spec.dims, layout.switch_coords[a], layout.switch_coords[b]);
      if (hops[a][b] != expected) FAIL_CHECK("hosts " << a << " and " << b << ": " << hops[a][b] << " hops, expected " << expected);
      // Dimension order gives exactly one path.
      if (a < 4 && routed_path_count(t, routes, a, b) != 1) FAIL_CHECK("more than one path " << a << " -> " << b);
    }
  }
  CHECK(s.diameter_hops == 8);  // 6 between switches + 2 host links
}

TEST_CASE("NVSwitch presets give the published per-GPU bandwidth into the switch layer, at NCCL's data rate") {
  // 450, 300, 900 and 900 GB/s of line rate carrying 20.6 / 25, 20 / 25, 40.1 / 50 and 40.1 / 50 of data.
  for (const auto& [preset, gpus, chips, gbytes] :
       {std::tuple{"dgx_h100", 8, 4, 370.8}, std::tuple{"dgx_a100", 8, 6, 240.0}, std::tuple{"gb200_nvl72", 72, 18, 721.8},
        std::tuple{"dgx_b200", 8, 2, 721.8}}) {
    CAPTURE(preset);
    const Topology t = nvswitch_topology(*nvswitch_preset(preset));
    CHECK(t.host_count() == static_cast<std::size_t>(gpus));
    CHECK(t.switch_count() == static_cast<std::size_t>(chips));
    for (std::uint32_t g = 0; g < t.host_count(); ++g) {
      std::int64_t bps = 0;
      for (const TopologyLink& l : t.links()) {
        if (l.a == t.host_node(g)) bps += l.bandwidth.bits_per_second;
      }
      CHECK(bps == std::llround(gbytes * 8e9));
    }
  }
  CHECK_FALSE(nvswitch_preset("dgx_z9000"));
}

TEST_CASE("rail-optimized fabrics have the expected switches and links, two sizes") {
  RailOptimizedSpec small;
  small.nodes = 4;
  small.rails = 8;
  small.spines = 4;
  const Topology a = rail_optimized_topology(small);
  CHECK(a.host_count() == 32);
  CHECK(a.switch_count() == 8 + 4);
  CHECK(a.links().size() == 32 + 8 * 4);
  RailOptimizedSpec big;
  big.nodes = 16;
  big.rails = 8;
  big.spines = 8;
  big.links_per_pair = 2;
  const Topology b = rail_optimized_topology(big);
  CHECK(b.host_count() == 128);
  CHECK(b.switch_count() == 8 + 8);
  CHECK(b.links().size() == 128 + 8 * 8 * 2);
  // Same rail: NIC - rail - NIC; other rail: NIC - rail - spine - rail - NIC.
  const auto hops = routed_hops(b, compute_routes(b));
  CHECK(hops[0][8] == 2);   // node 0 rail 0 -> node 1 rail 0
  CHECK(hops[0][9] == 4);   // node 0 rail 0 -> node 1 rail 1
}

TEST_CASE("a DGX H100 cluster on rails: counts, and GPUs use NVLink inside a node and PCIe+NIC across") {
  ClusterSpec spec;
  spec.nodes = 2;
  spec.node = *nvswitch_preset("dgx_h100");
  spec.nics_per_node = 8;
  RailOptimizedSpec rails;
  rails.spines = 2;
  rails.fabric_link = link(400);
  spec.fabric = rails;
  const Topology t = cluster_topology(spec);
  const TopologySummary s = summarize(t);
  CHECK(s.gpus == 16);
  CHECK(s.nodes_by_role.at("nvswitch") == 8);
  CHECK(s.nics == 16);
  CHECK(s.nodes_by_role.at("rail") == 8);
  CHECK(s.nodes_by_role.at("spine") == 2);
  CHECK(s.links_by_tier.at("nvlink") == 2 * 8 * 4);
  CHECK(s.links_by_tier.at("pcie") == 16);
  CHECK(s.links_by_tier.at("nic-rail") == 16);
  CHECK(s.links_by_tier.at("rail-spine") == 8 * 2);
  const auto routes = compute_routes(t);
  // GPU 0's ports: 4 NVLink trunks (0..3), then PCIe (4).
  CHECK(std::vector<PortIndex>(routes.to(t.host_node(0), 1).begin(), routes.to(t.host_node(0), 1).end()) ==
        std::vector<PortIndex>{0, 1, 2, 3});
  CHECK(std::vector<PortIndex>(routes.to(t.host_node(0), 8).begin(), routes.to(t.host_node(0), 8).end()) ==
        std::vector<PortIndex>{4});
  const auto hops = routed_hops(t, routes);
  CHECK(hops[0][1] == 2);  // GPU - NVSwitch - GPU
  CHECK(hops[0][8] == 4);  // GPU - NIC - rail 0 - NIC - GPU (same rail)
  CHECK(hops[0][9] == 6);  // ... rail 0 - spine - rail 1 ...
}

TEST_CASE("GPUs sharing a NIC still talk over NVLink") {
  ClusterSpec spec;
  spec.nodes = 2;
  spec.node = *nvswitch_preset("dgx_h100");
  spec.nics_per_node = 4;  // two GPUs per NIC
  LeafSpineSpec fabric;
  fabric.hosts_per_leaf = 4;
  fabric.leaves = 2;
  fabric.spines = 2;
  spec.fabric = fabric;
  const Topology t = cluster_topology(spec);
  const auto routes = compute_routes(t);
  CHECK(routes.to(t.host_node(0), 1).size() == 4);  // the four NVLink trunks, not PCIe
}

TEST_CASE("bisection bandwidth from the min cut matches the hand values") {
  SUBCASE("k=8 fat-tree, all 100G: full bisection, 64 hosts x 100G") {
    const Topology t = fat_tree_topology(fat_tree(8));
    CHECK(summarize(t).bisection_bandwidth_bps == within(6400e9, 1e-9));
  }
  SUBCASE("2:1 leaf/spine: half of the hosts' bandwidth") {
    LeafSpineSpec s;
    s.leaves = 4;
    s.hosts_per_leaf = 8;
    s.spines = 4;
    s.host_link = link(100);
    s.fabric_link.bandwidth = fabric_bandwidth_for(s, 2.0);
    CHECK(s.fabric_link.bandwidth.bits_per_second == 100'000'000'000);  // 8 x 100G down, 4 x 100G up
    const Topology t = leaf_spine_topology(s);
    // Half = 2 leaves: their hosts offer 1600G, their uplinks carry 2 x 4 x 100G = 800G.
    CHECK(summarize(t).bisection_bandwidth_bps == within(800e9, 1e-9));
  }
  SUBCASE("4x4x4 torus: two planes of 16 links are cut (the wrap doubles them)") {
    Torus3dSpec spec;
    spec.dims = {4, 4, 4};
    spec.dim_links = {link(100), link(100), link(100)};
    spec.host_link = link(1000);
    const Topology t = torus3d_topology(spec);
    CHECK(summarize(t).bisection_bandwidth_bps == within(32 * 100e9, 1e-9));
  }
  SUBCASE("an irregular case: a 2:1 leaf with two uplinks, cut between its hosts and the rest") {
    LeafSpineSpec s;
    s.leaves = 2;
    s.hosts_per_leaf = 4;
    s.spines = 2;
    s.host_link = link(100);
    s.fabric_link = link(100);
    const Topology t = leaf_spine_topology(s);
    // Leaf 0's hosts (4 x 100G) reach leaf 1 over 2 x 100G uplinks.
    CHECK(min_cut_bandwidth(t, range(0, 4), range(4, 8)) == within(200e9, 1e-9));
  }
}

TEST_CASE("topology checks reject endpoints without links and fabrics in pieces") {
  Topology lonely;
  const auto a = lonely.add_host("a"), b = lonely.add_host("b");
  lonely.add_host("c");
  const auto s = lonely.add_switch("s");
  lonely.connect(a, s, Bandwidth::gbps(1), ns(1), "x");
  lonely.connect(b, s, Bandwidth::gbps(1), ns(1), "x");
  CHECK(check_topology(lonely) == "endpoint 'c' has no link");

  // Components meet only through links of at least 1 ns (a parallel run's lookahead).
  Topology instant;
  const auto x = instant.add_host("x"), y = instant.add_host("y");
  instant.connect(x, y, Bandwidth::gbps(1), 999, "x");
  CHECK(check_topology(instant) == "link x - y: expected a latency of at least 1ns (every link's latency is the lookahead of a parallel run), got " +
                                       format_time(999));

  Topology split;
  const auto h0 = split.add_host("h0"), h1 = split.add_host("h1");
  const auto s0 = split.add_switch("s0"), s1 = split.add_switch("s1");
  split.connect(h0, s0, Bandwidth::gbps(1), ns(1), "x");
  split.connect(h1, s1, Bandwidth::gbps(1), ns(1), "x");
  Simulator sim(1);
  CHECK_THROWS_WITH_AS(compile_network(split, sim, {}), doctest::Contains("cannot be reached"), std::invalid_argument);
}

TEST_CASE("leaf/spine ECMP sets by hand count") {
  LeafSpineSpec spec;
  spec.leaves = 4;
  spec.spines = 3;
  spec.hosts_per_leaf = 5;
  spec.links_per_pair = 2;
  const Topology t = leaf_spine_topology(spec);
  CHECK(t.host_count() == 20);
  CHECK(t.switch_count() == 7);
  const auto routes = compute_routes(t);
  const auto leaf0 = [&](std::uint32_t h) { return routes.to(t.switch_node(0), h); };
  for (std::uint32_t h = 0; h < 20; ++h) {
    CAPTURE(h);
    CHECK(leaf0(h).size() == (h < 5 ? 1u : 6u));  // down, or every uplink (3 spines x 2)
    for (std::uint32_t sp = 4; sp < 7; ++sp) CHECK(routes.to(t.switch_node(sp), h).size() == 2);
  }
}

TEST_CASE("oversubscription per tier: each switch's capacity toward the endpoints over that away from them") {
  SUBCASE("leaf-spine: 8 hosts of 100G under a leaf with 2 x 100G up: 4:1 at the leaves, spines left out") {
    LeafSpineSpec s;
    s.leaves = 3;
    s.spines = 2;
    s.hosts_per_leaf = 8;
    s.host_link = LinkSpec{Bandwidth::gbps(100), us(1)};
    s.fabric_link = LinkSpec{Bandwidth::gbps(100), us(1)};
    const std::vector<TierOversubscription> tiers = oversubscription(leaf_spine_topology(s));
    REQUIRE(tiers.size() == 1);
    CHECK(tiers[0].role == "leaf");
    CHECK(tiers[0].switches == 3);
    CHECK(tiers[0].lowest == doctest::Approx(8.0 * 100 / (2 * 100)));
    CHECK(tiers[0].highest == doctest::Approx(4.0));
  }
  SUBCASE("k=4 fat tree with equal links: non-blocking at edge and aggregation") {
    FatTreeSpec f;
    f.k = 4;
    f.host_link = f.edge_link = f.core_link = LinkSpec{Bandwidth::gbps(100), us(1)};
    const std::vector<TierOversubscription> tiers = oversubscription(fat_tree_topology(f));
    REQUIRE(tiers.size() == 2);
    CHECK(tiers[0].role == "edge");  // nearest the hosts first
    CHECK(tiers[0].switches == 8);
    CHECK(tiers[0].lowest == doctest::Approx(1.0));
    CHECK(tiers[1].role == "aggregation");
    CHECK(tiers[1].highest == doctest::Approx(1.0));
  }
  SUBCASE("fat tree with 400G host links and 100G above: 4:1 at the edge, 1:1 at aggregation") {
    FatTreeSpec f;
    f.k = 4;
    f.host_link = LinkSpec{Bandwidth::gbps(400), us(1)};
    f.edge_link = f.core_link = LinkSpec{Bandwidth::gbps(100), us(1)};
    const std::vector<TierOversubscription> tiers = oversubscription(fat_tree_topology(f));
    REQUIRE(tiers.size() == 2);
    CHECK(tiers[0].lowest == doctest::Approx(2 * 400.0 / (2 * 100)));
    CHECK(tiers[1].lowest == doctest::Approx(1.0));
  }
}
