#pragma once
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

// A file in the temp directory private to this test process: ctest runs test cases as parallel
// processes, and two cases writing one fixed name race (one renames what the other removed).
inline std::filesystem::path test_temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name);
}

// A purely relative tolerance: doctest's Approx also adds epsilon * 1.0 absolute slack by
// default, which makes "within 1%" of 0.5 really "within 3%".
// results.json without the lines a split may change: wall times and the parallel section.
inline std::string without_split_lines(const std::string& json) {
  std::istringstream in(json);
  std::string line, kept;
  bool in_parallel = false;
  while (std::getline(in, line)) {
    if (line.rfind("  \"parallel\": {", 0) == 0) in_parallel = true;
    if (in_parallel) {
      if (line == "  }," || line == "  }") in_parallel = false;
      continue;
    }
    if (line.find("wall_seconds\"") != std::string::npos) continue;
    kept += line + "\n";
  }
  return kept;
}

inline doctest::Approx within(double expected, double relative) {
  return doctest::Approx(expected).epsilon(relative).scale(0);
}

// Endpoints g0 .. g(n-1) (or with another prefix) on one switch s, every link `bandwidth`
// and `latency`: the ideal domain of closed-form tests. A `topology:` section.
inline std::string star_yaml(int n, const std::string& latency, const std::string& prefix = "g",
                             const std::string& bandwidth = "100Gbps") {
  std::string hosts, links;
  for (int i = 0; i < n; ++i) {
    const std::string h = prefix + std::to_string(i);
    hosts += (i ? ", " : "") + h;
    links += "    - {a: " + h + ", b: s, bandwidth: " + bandwidth + ", latency: " + latency + "}\n";
  }
  return "\ntopology:\n  kind: custom\n  hosts: [" + hosts + "]\n  switches: [s]\n  links:\n" + links;
}

// A k=4 fat-tree at 100G, 500 ns links (16 hosts): a `topology:` section.
inline std::string fat_tree_k4_yaml() {
  return "\ntopology:\n  kind: fat_tree\n  k: 4\n  host_link: {bandwidth: 100Gbps, latency: 500ns}\n"
         "  fabric_link: {bandwidth: 100Gbps, latency: 500ns}\n";
}

// Two DGX H100 nodes (8 GPUs, 8 x 400G InfiniBand NICs each) on a rail-optimized fabric
// with 2 spines, 64 KiB packets. `node_keys` and `fabric_keys` go inside the node's and
// the fabric's maps (", nvls: false"), `workload` after `workload: `.
inline std::string two_dgx_h100_yaml(const std::string& workload, const std::string& node_keys = "",
                                     const std::string& fabric_keys = "") {
  return "topology:\n  kind: cluster\n  nodes: 2\n  node: {preset: dgx_h100" + node_keys +
         "}\n  nics_per_node: 8\n  nic: {bandwidth: 400Gbps, latency: 500ns, kind: infiniband}\n"
         "  fabric: {kind: rail_optimized, spines: 2, fabric_link: {bandwidth: 400Gbps, latency: 500ns}" +
         fabric_keys + "}\nnetwork: {mtu: 64KiB}\n" + (workload.empty() ? "" : "workload: " + workload + "\n");
}

// Two senders, a and b, each with one 1 GiB flow into r through switch s, over 100G, 1 us
// links: s -> r is the bottleneck. `network_keys` adds congestion control (indented two
// spaces, under `network`) to a 16 MiB shared buffer with PFC as the backstop.
inline std::string two_flows_yaml(const std::string& network_keys) {
  return R"(
topology:
  kind: custom
  hosts: [a, b, r]
  switches: [s]
  links:
    - {a: a, b: s, bandwidth: 100Gbps, latency: 1us}
    - {a: b, b: s, bandwidth: 100Gbps, latency: 1us}
    - {a: s, b: r, bandwidth: 100Gbps, latency: 1us}
network:
  mtu: 4KiB
  buffer: {size: 16MiB}
  pfc: {}
)" + network_keys + R"(messages:
  - {src: a, dst: r, bytes: 1GiB}
  - {src: b, dst: r, bytes: 1GiB}
)";
}

// 17 hosts on one switch (a one-leaf leaf/spine), 100G, 1 us links; hosts 0..15 send
// 1 MiB each to host 16. `network_keys` go under `network` (indented two spaces) after
// a 4 KiB MTU and 64 B headers; `link_keys` are added to both link maps.
inline std::string incast_yaml(const std::string& network_keys, const std::string& link_keys = "") {
  return R"(
topology:
  kind: leaf_spine
  leaves: 1
  spines: 1
  hosts_per_leaf: 17
  host_link: {bandwidth: 100Gbps, latency: 1us)" + link_keys + R"(}
  fabric_link: {bandwidth: 100Gbps, latency: 1us)" + link_keys + R"(}
network:
  mtu: 4KiB
  header_bytes: 64
)" + network_keys + R"(workload: {kind: incast, receiver: h16, senders: 16, bytes: 1MiB}
)";
}
