#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "app/config/config_loader.h"
#include "app/scenario/scenario.h"

using namespace fabricsim;

TEST_CASE("a config loads into plain structs with units resolved and defaults filled") {
  const ScenarioConfig c = load_config_file(FABRICSIM_TEST_CONFIGS "/good/two_hosts_one_switch.yaml");
  CHECK(c.name == "two_hosts_one_switch");
  CHECK(c.seed == 1);
  CHECK(c.topology.kind == TopologyConfig::Kind::kCustom);
  REQUIRE(c.topology.custom.links.size() == 2);
  CHECK(c.topology.custom.links[0].link.bandwidth.bits_per_second == 100'000'000'000);
  CHECK(c.topology.custom.links[0].link.latency == us(1));
  CHECK(c.network.nic.mtu == 4096);
  CHECK(c.network.queue_capacity == 16 * 1024 * 1024);  // default
  CHECK(c.network.load_balancing == LoadBalancing::kEcmp);
  REQUIRE(c.messages.size() == 1);
  CHECK(c.messages[0].bytes == 40 * 1024);
  CHECK(c.messages[0].start == us(2));
  CHECK(c.stop.time == kTimeMax);
}

TEST_CASE("--set overrides values, creating maps as needed") {
  const ScenarioConfig c = load_config_file(FABRICSIM_TEST_CONFIGS "/good/two_hosts_one_switch.yaml",
                                            {"network.mtu=9000", "messages[0].bytes=1MiB", "stop.time=1ms", "seed=9"});
  CHECK(c.network.nic.mtu == 9000);
  CHECK(c.messages[0].bytes == 1024 * 1024);
  CHECK(c.stop.time == ms(1));
  CHECK(c.seed == 9);
}

TEST_CASE("the whole pipeline from YAML reproduces the one-switch closed form") {
  // a -> s -> b, 100 Gb/s (80 ps per byte), 1 us per link, 10 packets of 4096 + 64 B,
  // starting at 2 us: delivered = 2 us + (10 + 2 - 1) * 332800 ps + 2 * 1 us.
  ScenarioRun run(load_config_file(FABRICSIM_TEST_CONFIGS "/good/two_hosts_one_switch.yaml"));
  run.run();
  CHECK(run.complete());
  const Message& m = run.network().messages()[0];
  const Time delivered = us(2) + 11 * 332'800 + us(2);
  CHECK(m.delivered == delivered);
  CHECK(m.finished == delivered + 2 * (64 * 80 + us(1)));
}

TEST_CASE("every example config under configs/ validates and builds") {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FABRICSIM_SOURCE_DIR "/configs")) {
    if (entry.path().extension() != ".yaml") continue;
    CAPTURE(entry.path().string());
    const ScenarioConfig c = load_config_file(entry.path().string());
    if (c.workload.is("trace") &&
        !std::filesystem::exists(entry.path().parent_path() / c.workload.trace.file)) {
      // A trace the user generates first (the config's header says how); the command-
      // line test generates it and validates the config with it.
      ++n;
      continue;
    }
    CHECK_NOTHROW(ScenarioRun{c});
    ++n;
  }
  CHECK(n >= 1);
}

TEST_CASE("the built-in default scenario is the 2-node DGX H100 ring AllReduce sweep of configs/") {
  const ScenarioConfig c = load_config_text(default_scenario_yaml(), "<built-in default>");
  const ScenarioConfig f = load_config_file(FABRICSIM_SOURCE_DIR "/configs/dgx_h100_2node_allreduce.yaml");
  CHECK(c.name == "default");
  CHECK(c.topology.kind == TopologyConfig::Kind::kCluster);
  CHECK(c.topology.cluster.nodes == 2);
  CHECK(c.topology.cluster.node.gpus == 8);
  CHECK(c.workload.is("collective"));
  CHECK(c.workload.collective.op == CollectiveOp::kAllReduce);
  CHECK(c.workload.collective.algorithm == "ring");
  CHECK(c.workload.collective.sizes.front() == 1 << 20);
  CHECK(c.workload.collective.sizes.back() == 1 << 30);
  CHECK(c.workload.collective.sizes == f.workload.collective.sizes);
  CHECK(c.workload.collective.channels == f.workload.collective.channels);
  CHECK(c.topology.cluster.nic_link.bandwidth == f.topology.cluster.nic_link.bandwidth);
}

TEST_CASE("docs/config.md's network defaults are the code's") {
  // Every `network` key the docs give a literal default for (a value, not a rule such as
  // `traffic_classes - 1`), set to that default, leaves the network settings as they were.
  // Keys of sections (buffer.size, ecn.kmin, ...) are left out: giving one turns its section on.
  std::ifstream in(FABRICSIM_SOURCE_DIR "/docs/config.md");
  REQUIRE(in);
  const std::string base = FABRICSIM_TEST_CONFIGS "/good/two_hosts_one_switch.yaml";
  const NetworkConfig defaults = load_config_file(base).network;
  const std::regex row(R"(^\| `([a-z_]+)` \| [^|]* \| `?([^`| ]+)`? \|)");
  std::string line;
  bool in_network = false;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_network = line == "## `network`";
    std::smatch m;
    if (!in_network || !std::regex_search(line, m, row)) continue;
    const std::string key = m[1], value = m[2];
    if (value == "off" || value == "none" || value == "required") continue;
    CAPTURE(key);
    CAPTURE(value);
    const NetworkConfig set = load_config_file(base, {"network." + key + "=" + value}).network;
    CHECK(set == defaults);
    ++checked;
  }
  CHECK(checked >= 15);
}

TEST_CASE("every workload kind in the registry is documented in docs/config.md, and each reads only its own keys") {
  std::ifstream in(FABRICSIM_SOURCE_DIR "/docs/config.md");
  const std::string docs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const WorkloadKind& kind : workload_kinds()) {
    const std::string name = kind.name;
    CHECK_MESSAGE((docs.find("`kind: " + name + "`") != std::string::npos || docs.find("`" + name + "`") != std::string::npos), name);
  }
  // An incast's settings are its own: senders and receiver, which a permutation refuses.
  const std::string fabric =
      "topology: {kind: leaf_spine, hosts_per_leaf: 2, leaves: 2, spines: 1, host_link: {bandwidth: 100Gbps, latency: 1us},"
      " fabric_link: {bandwidth: 100Gbps, latency: 1us}}\n";
  const ScenarioConfig incast = load_config_text(fabric + "workload: {kind: incast, bytes: 64KiB, senders: 2, receiver: h3}\n", "incast");
  CHECK(incast.workload.is("incast"));
  CHECK(find_workload_kind(incast.workload.kind) != nullptr);
  CHECK_THROWS_WITH_AS(load_config_text(fabric + "workload: {kind: permutation, bytes: 64KiB, senders: 2}\n", "p"),
                       doctest::Contains("workload.senders: unknown key"), ConfigError);
  // Loaded configs without a workload name no kind.
  CHECK(find_workload_kind(load_config_text(fabric, "none").workload.kind) == nullptr);
}
