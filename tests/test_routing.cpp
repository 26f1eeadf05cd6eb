// Routing tables against hand counts on a leaf/spine.
#include <doctest/doctest.h>

#include "topologies/compile.h"
#include "topologies/leaf_spine.h"

using namespace fabricsim;

TEST_CASE("leaf/spine sizes and ECMP sets by hand count") {
  LeafSpineSpec spec;
  spec.leaves = 4;
  spec.spines = 3;
  spec.hosts_per_leaf = 5;
  spec.links_per_pair = 2;
  const Topology t = build_leaf_spine(spec);
  CHECK(t.host_count() == 20);
  CHECK(t.switch_count() == 7);
  CHECK(t.links().size() == 20 + 4 * 3 * 2);
  const RoutingTables routes = compute_shortest_path_routes(t);
  // Leaf switches are 0..3, spines 4..6. Leaf 0's ports: 5 hosts, then 3 spines x 2.
  for (std::uint32_t h = 0; h < 20; ++h) {
    CAPTURE(h);
    if (h / 5 == 0) {
      CHECK(routes[0][h] == std::vector<PortIndex>{static_cast<PortIndex>(h)});  // straight down
    } else {
      CHECK(routes[0][h].size() == 6);  // every uplink: 3 spines x 2 parallel links
    }
    for (std::uint32_t sp = 4; sp < 7; ++sp) {
      CHECK(routes[sp][h].size() == 2);  // down to the host's leaf over either parallel link
    }
  }
}

TEST_CASE("topology checks reject hosts with two links and fabrics in pieces") {
  Topology two_links;
  const auto a = two_links.add_host("a"), b = two_links.add_host("b");
  const auto s = two_links.add_switch("s");
  two_links.connect(a, s, Bandwidth::gbps(1), 0, "x");
  two_links.connect(a, s, Bandwidth::gbps(1), 0, "x");
  two_links.connect(b, s, Bandwidth::gbps(1), 0, "x");
  CHECK(check_topology(two_links).find("'a' has 2 links") != std::string::npos);

  Topology split;
  const auto h0 = split.add_host("h0"), h1 = split.add_host("h1");
  const auto s0 = split.add_switch("s0"), s1 = split.add_switch("s1");
  split.connect(h0, s0, Bandwidth::gbps(1), 0, "x");
  split.connect(h1, s1, Bandwidth::gbps(1), 0, "x");
  Simulator sim(1);
  CHECK_THROWS_WITH_AS(compile_network(split, sim, {}), doctest::Contains("cannot be reached"), std::invalid_argument);
}
