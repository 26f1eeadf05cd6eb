// Explicit rank-to-endpoint placement and process groups, against hand-worked times.
#include <doctest/doctest.h>

#include <filesystem>

#include "app/workload/collective_sweep.h"
#include "app/config/config_loader.h"
#include "app/scenario/scenario.h"
#include "test_support.h"
#include "workloads/traces/chakra/chakra_import.h"
#include "workloads/traces/trace_replay.h"

using namespace fabricsim;

namespace {

// Four hosts on one switch, 100 Gb/s, 1 us links.
const char* kStar = R"(
topology:
  kind: custom
  hosts: [h0, h1, h2, h3]
  switches: [s]
  links:
    - {a: h0, b: s, bandwidth: 100Gbps, latency: 1us}
    - {a: h1, b: s, bandwidth: 100Gbps, latency: 1us}
    - {a: h2, b: s, bandwidth: 100Gbps, latency: 1us}
    - {a: h3, b: s, bandwidth: 100Gbps, latency: 1us}
network: {mtu: 4KiB, header_bytes: 64, ack_bytes: 64, ack_interval: 1000}
)";

// A message of n full packets (4160 B, 332.8 ns each at 100G) crosses two links,
// store-and-forward: (n + 1) x 332.8 ns + 2 x 1 us. Acks come once per message (on its
// last packet); at each step boundary a rank's ack for the message it just received
// leaves before its next send, delaying that send by one ack (64 B: 5.12 ns).
constexpr Time message_time(int packets) { return (packets + 1) * 332'800 + 2 * us(1); }
constexpr Time kAck = 5'120;

}  // namespace

TEST_CASE("a collective placed on chosen endpoints runs there and only there") {
  // Ring AllReduce of 80 KiB over two ranks placed on h2 and h0: one reduce-scatter and
  // one all-gather step, each a 40 KiB (10-packet) message each way at once, the second
  // after the first arrives: 2 x (11 x 332.8 ns + 2 us) + one ack = 11.32672 us.
  ScenarioRun run(load_config_text(std::string(kStar) + R"(
workload: {kind: collective, op: all_reduce, algorithm: ring, bytes: 80KiB, placement: [h2, h0]}
)",
                                   "placed"));
  run.run();
  REQUIRE(run.complete());
  REQUIRE(run.collective()->rows().size() == 1);
  CHECK(run.collective()->rows()[0].time == 2 * message_time(10) + kAck);
  CHECK(run.collective()->rows()[0].data_check == "passed");
  CHECK(run.network().nic(0).counters().data_packets_sent == 20);
  CHECK(run.network().nic(2).counters().data_packets_sent == 20);
  CHECK(run.network().nic(1).counters().data_packets_sent == 0);
  CHECK(run.network().nic(3).counters().data_packets_sent == 0);
}

TEST_CASE("a Chakra trace with two process groups runs each collective within its group") {
  // Ranks 0 and 1 all-reduce 80 KiB in process group tp0, ranks 2 and 3 in tp1. Each
  // group is a two-rank ring with links of its own: both finish in 2 x message_time(10)
  // + one ack = 11.32672 us. Read as one group of four (no process groups given), the
  // same ops are one four-rank ring: 6 steps of 20 KiB (5 packets) and 5 step boundaries:
  // 6 x (6 x 332.8 ns + 2 us) + 5 acks = 24.0064 us. Either starts one notice after its
  // last member arrived: the star's links are all 1 us, so no two hosts share a node
  // (a unit of shorter links), and the word that all are there crosses one 1 us link.
  Trace trace;
  trace.set_ranks(4);
  for (int r = 0; r < 4; ++r) {
    TraceOp op;
    op.id = 1;
    op.kind = TraceOpKind::kCollective;
    op.op = CollectiveOp::kAllReduce;
    op.bytes = 80 * 1024;
    op.process_group = trace.name_id(r < 2 ? "tp0" : "tp1");
    trace.add(r, op);
  }
  const auto prefix = test_temp_path("fabricsim_test_two_groups").string();
  export_chakra(trace, prefix);
  const auto replay_time = [&](const std::string& groups) {
    ScenarioRun run(load_config_text(std::string(kStar) + "workload: {kind: chakra, prefix: " + prefix + ", ranks: 4" + groups + "}\n", "pg"));
    run.run();
    REQUIRE(run.replay() != nullptr);
    REQUIRE(run.replay()->done());
    return run.replay()->iteration_time();
  };
  CHECK(replay_time(", process_groups: {tp0: [0, 1], tp1: [2, 3]}") == us(1) + 2 * message_time(10) + kAck);
  CHECK(replay_time("") == us(1) + 6 * message_time(5) + 5 * kAck);
  for (int r = 0; r < 4; ++r) std::filesystem::remove(prefix + "." + std::to_string(r) + ".et");
}
