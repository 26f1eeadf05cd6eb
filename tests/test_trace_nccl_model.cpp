// One model everywhere: a trace's collective runs as `collective` runs the same size over
// the same GPUs, under NCCL's model (algorithm, protocol, channels, pieces and costs) by
// default, and as the network alone under `protocol: none`.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "app/config/config_error.h"
#include "app/config/config_loader.h"
#include "app/scenario/scenario.h"
#include "test_support.h"

using namespace fabricsim;

namespace {

// A trace of one AllReduce of `bytes` over `members` ranks (on the first of the 16 GPUs of
// two DGX H100 nodes unless placed; all 16 by default), no compute.
std::string one_allreduce_trace(std::int64_t bytes, int members = 16, const std::string& op = "all_reduce") {
  const auto path = test_temp_path("fabricsim_trace_nccl_" + op + std::to_string(bytes) + "_" + std::to_string(members) + ".jsonl");
  std::ofstream f(path);
  f << R"({"fabricsim_trace": 1, "ranks": )" << members << R"(, "achieved_tflops": 100})" << "\n";
  std::string group;
  for (int r = 0; r < members; ++r) group += (r > 0 ? "," : "") + std::to_string(r);
  for (int r = 0; r < members; ++r) {
    f << R"({"rank": )" << r << R"(, "id": 0, "kind": "collective", "op": ")" << op << R"(", "bytes": )" << bytes
      << R"(, "key": "ar", "group": [)" << group << R"(], "label": "dp"})" << "\n";
  }
  return path.string();
}

struct Both {
  Time trace = 0;
  Time collective = 0;
  std::string trace_model, collective_model;
  std::string algorithm, protocol;
};

// The same AllReduce replayed from a trace and run as a collective sweep of one size.
Both both(std::int64_t bytes, const std::string& keys, const std::string& network = "", int members = 16,
          const std::string& op = "all_reduce") {
  const std::string path = one_allreduce_trace(bytes, members, op);
  const auto yaml = [&](const std::string& workload) {
    std::string text = two_dgx_h100_yaml(workload);
    if (!network.empty()) text.replace(text.find("network: {mtu: 64KiB}"), 21, "network: {mtu: 64KiB, " + network + "}");
    return text;
  };
  Both b;
  {
    ScenarioRun run(load_config_text(yaml("{kind: trace, file: " + path + keys + "}"), "<trace>"));
    run.run();
    REQUIRE(run.replay() != nullptr);
    REQUIRE(run.replay()->done());
    b.trace = run.replay()->iteration_time();
    b.trace_model = run.replay()->model_description();
  }
  {
    ScenarioRun run(load_config_text(
        yaml("{kind: collective, op: " + op + ", ranks: " + std::to_string(members) + ", sizes: {from: " + std::to_string(bytes) +
             ", to: " + std::to_string(bytes) + "}, check_data: false" + keys + "}"),
        "<collective>"));
    run.run();
    REQUIRE(run.collective() != nullptr);
    const CollectiveRow& row = run.collective()->rows()[0];
    b.collective = row.time;
    b.collective_model = run.collective()->model_description();
    b.algorithm = row.algorithm;
    b.protocol = row.protocol;
  }
  std::filesystem::remove(path);
  return b;
}

// A collective whose members span both nodes (two units) starts one notice after its
// last member arrives: the fabric's longest link, 500 ns.
constexpr Time kNotice = 500'000;

}  // namespace

TEST_CASE("a trace's collective takes what `collective` gives the same size on the same GPUs, under NCCL's model") {
  for (std::int64_t bytes : {std::int64_t{64} << 10, std::int64_t{1} << 20, std::int64_t{16} << 20}) {
    // (NVLS-tree at 16 MiB: NCCL's 64 KiB chunks, in both.)
    for (const char* keys : {", algorithm: ring", ", algorithm: auto", ", algorithm: tree, protocol: ll128", ", algorithm: nvls_tree"}) {
      CAPTURE(bytes);
      CAPTURE(std::string(keys));
      const Both b = both(bytes, keys);
      CHECK(b.protocol != "-");  // NCCL's model ran
      CHECK(b.trace == b.collective + kNotice);
      CHECK(b.trace_model == b.collective_model);
    }
  }
  // Under NCCL's model the 1 MiB ring over 16 GPUs picks LL128, whose flags (8 bytes in
  // 128) and latencies the network alone does not pay: slower than `protocol: none`.
  const Both nccl = both(1 << 20, ", algorithm: ring");
  const Both ideal = both(1 << 20, ", algorithm: ring, protocol: none");
  CHECK(nccl.protocol == "LL128");
  CHECK(ideal.protocol == "-");
  CHECK(ideal.trace == ideal.collective + kNotice);
  CHECK(ideal.trace < nccl.trace);
  CHECK(nccl.trace_model == "NCCL 2.28 tuning rules, protocol auto");
  CHECK(ideal.trace_model == "ideal network (protocol none: no NCCL costs)");
}

TEST_CASE("a trace's AllToAll takes what `collective` gives it: NCCL's p2p plan, in one node and across two") {
  // On one node's 8 GPUs 64 KiB a peer is LL, 2 MiB Simple (32 channels a peer x 16 KiB
  // between); 16 GPUs span both nodes (NCCL's plan across nodes).
  for (int members : {8, 16}) {
    for (std::int64_t bytes : {std::int64_t{64} << 10 << 3, std::int64_t{1} << 20 << 4}) {
      CAPTURE(members);
      CAPTURE(bytes);
      const Both b = both(bytes, ", algorithm: auto", "", members, "all_to_all");
      CHECK(b.protocol != "-");
      if (members == 8) CHECK(b.protocol == (bytes == (std::int64_t{64} << 13) ? "LL" : "Simple"));
      CHECK(b.trace == b.collective + (members > 8 ? kNotice : 0));
    }
  }
}

TEST_CASE("a trace's tree over one node's GPUs of a cluster runs as `collective`'s: NCCL's chain of that node") {
  // The first 8 of 16 GPUs are node 0 of the two: both run NCCL's one-node tree (the
  // chain), and the members share one unit, so the trace starts with no notice.
  for (std::int64_t bytes : {std::int64_t{1} << 20, std::int64_t{64} << 20}) {
    CAPTURE(bytes);
    const Both b = both(bytes, ", algorithm: tree, protocol: simple", "", 8);
    CHECK(b.algorithm == "tree");
    CHECK(b.trace == b.collective);
  }
}

TEST_CASE("a tree over GPUs of two nodes placed by name is not one node's chain, in a trace as in `collective`") {
  // Four ranks, two on each node: fewer ranks than a node's GPUs, but across nodes, so
  // both run NCCL's tree over nodes (the trace's members span two units: one notice).
  const std::string placement = ", placement: [n0.gpu0, n0.gpu1, n1.gpu0, n1.gpu1]";
  const Both b = both(64 << 20, ", algorithm: tree, protocol: simple" + placement, "", 4);
  CHECK(b.algorithm == "tree");
  CHECK(b.trace == b.collective + kNotice);
  const Both chain = both(64 << 20, ", algorithm: tree, protocol: simple, placement: [n0.gpu0, n0.gpu1, n0.gpu2, n0.gpu3]", "", 4);
  CHECK(chain.trace == chain.collective);
  CHECK(chain.collective != b.collective);
}

TEST_CASE("at flow fidelity a trace's coupled ring takes NCCL's costs as `collective`'s does") {
  for (std::int64_t bytes : {std::int64_t{1} << 20, std::int64_t{64} << 20}) {
    CAPTURE(bytes);
    const Both b = both(bytes, ", algorithm: ring", "fidelity: flow");
    CHECK(b.protocol != "-");
    CHECK(b.trace == b.collective + kNotice);
  }
}

TEST_CASE("a trace whose auto may choose CollNet runs it serially and is refused split, not run otherwise") {
  // Two DGX H100 nodes without NVLS, on rails that run SHARP: NCCL's choice for 64 MiB over
  // all 16 GPUs is CollNet Direct, whose sums a split run does not run. Choosing another
  // algorithm there would make the split run differ from the serial one: it is refused.
  const std::string path = one_allreduce_trace(64 << 20);
  const auto config = [&] {
    std::string text = two_dgx_h100_yaml("{kind: trace, file: " + path + ", algorithm: auto}", ", nvls: false", ", sharp: {bandwidth: 3200Gbps}");
    return load_config_text(text, "<sharp>");
  };
  {
    ScenarioRun run(config());
    run.run();
    REQUIRE(run.replay() != nullptr);
    CHECK(run.replay()->done());
  }
  ScenarioConfig split = config();
  split.threads = 2;
  split.partitions = 2;
  CHECK_THROWS_WITH_AS(ScenarioRun(std::move(split)),
                       doctest::Contains("auto may choose collnet for a trace's collectives"), ConfigError);
  std::filesystem::remove(path);
}
