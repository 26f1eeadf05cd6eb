// Collectives against closed forms, data checking of every algorithm, and MSCCL.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "app/config/config_error.h"
#include "app/config/config_loader.h"
#include "app/workload/custom_steps.h"
#include "app/scenario/scenario.h"
#include "test_support.h"
#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/collective_data.h"
#include "workloads/collectives/msccl_xml.h"
#include "topologies/nvswitch.h"

using namespace fabricsim;

namespace {

// An ideal NVSwitch domain: one non-blocking switch, every GPU on one 450 GB/s trunk
// (18 NVLinks of 25 GB/s), 250 ns per hop, 64 KiB packets with 64 B of header.
std::string nvswitch_domain(int gpus, const std::string& workload) {
  return R"(
topology:
  kind: nvswitch
  gpus: )" + std::to_string(gpus) + R"(
  switches: 1
  links_per_switch: 18
  nvlink_bandwidth: 25GBps
  latency: 250ns
  nvls: {bandwidth: 300GBps}
network:
  mtu: 64KiB
  header_bytes: 64
workload: )" + workload + "\n";
}

constexpr double kB = 450e9;        // bytes per second per GPU
constexpr double kMtu = 65536, kHeader = 64;
constexpr double kL = 250e-9;       // per hop
// Wire bytes per payload byte, and one packet's serialization plus both hops' latency:
// the per-step cost of a store-and-forward message through the switch.
constexpr double kWire = (kMtu + kHeader) / kMtu;
constexpr double kStep = (kMtu + kHeader) / kB + 2 * kL;

double run_us(const std::string& yaml, std::string* check = nullptr) {
  ScenarioRun run(load_config_text(yaml, "collective"));
  run.run();
  REQUIRE(run.collective());
  REQUIRE(run.collective()->rows().size() == 1);
  const CollectiveRow& row = run.collective()->rows()[0];
  REQUIRE(row.time > 0);
  if (check) *check = row.data_check;
  return to_us(row.time);
}

}  // namespace

TEST_CASE("ring AllReduce of 1 GiB on an ideal 8-GPU NVSwitch domain: 2(n-1)/n S/B plus 2(n-1) step latencies") {
  // T = 2(n-1)/n * S * wire / B + 2(n-1) * (one packet / B + 2 L)
  const double n = 8, S = 1 << 30;
  const double expected_us = (2 * (n - 1) / n * S * kWire / kB + 2 * (n - 1) * kStep) * 1e6;
  const double got = run_us(nvswitch_domain(8, "{kind: collective, op: all_reduce, algorithm: ring, protocol: none, bytes: 1GiB, check_data: false}"));
  MESSAGE("ring AllReduce 1 GiB, 8 GPUs: " << got << " us, closed form " << expected_us << " us");
  CHECK(got == within(expected_us, 0.01));
}

TEST_CASE("ring AllGather and ReduceScatter: (n-1)/n S/B plus (n-1) step latencies") {
  const double n = 8, S = 256 << 20;
  const double expected_us = ((n - 1) / n * S * kWire / kB + (n - 1) * kStep) * 1e6;
  for (const std::string op : {"all_gather", "reduce_scatter"}) {
    CAPTURE(op);
    const double got = run_us(nvswitch_domain(8, "{kind: collective, op: " + op + ", algorithm: ring, protocol: none, bytes: 256MiB}"));
    MESSAGE(op << " 256 MiB, 8 GPUs: " << got << " us, closed form " << expected_us << " us");
    CHECK(got == within(expected_us, 0.01));
  }
}

TEST_CASE("halving-doubling AllReduce for n = 8 and 16: 2(n-1)/n S/B plus 2 log2(n) step latencies") {
  const double S = 256 << 20;
  for (const int n : {8, 16}) {
    CAPTURE(n);
    // Halving sends S/2, S/4, ..., S/n; doubling the same back: 2(n-1)/n S in 2 log2 n rounds.
    const double expected_us = (2.0 * (n - 1) / n * S * kWire / kB + 2 * std::log2(n) * kStep) * 1e6;
    const double got = run_us(nvswitch_domain(n, "{kind: collective, op: all_reduce, algorithm: halving_doubling, bytes: 256MiB}"));
    MESSAGE("halving-doubling 256 MiB, " << n << " GPUs: " << got << " us, closed form " << expected_us << " us");
    CHECK(got == within(expected_us, 0.01));
  }
}

TEST_CASE("direct AllToAll on a non-blocking fat-tree: (n-1)/n S/B_nic") {
  // k = 4 fat-tree, 16 hosts, 100G everywhere, spraying; each host sends S/16 to each
  // of the 15 others at once, so its uplink carries (n-1)/n S of data, at 4160 wire
  // bytes per 4096, and the 64 B acknowledgement of every packet it receives, which is
  // as much again: (4160 + 64) / 4096 wire bytes per payload byte. Plus the path: 6
  // store-and-forward hops of one packet and 6 * 100 ns, and the last ack back.
  const double n = 16, S = 16 << 20, B = 100e9 / 8;
  const double wire = (4160.0 + 64) / 4096;
  const double expected_us = ((n - 1) / n * S * wire / B + 6 * (4160 / B + 100e-9) + 6 * (64 / B + 100e-9)) * 1e6;
  const std::string yaml = R"(
topology:
  kind: fat_tree
  k: 4
  host_link: {bandwidth: 100Gbps, latency: 100ns}
  fabric_link: {bandwidth: 100Gbps, latency: 100ns}
network:
  mtu: 4KiB
  load_balancing: spray
workload: {kind: collective, op: all_to_all, algorithm: direct, bytes: 16MiB}
)";
  std::string check;
  const double got = run_us(yaml, &check);
  MESSAGE("direct AllToAll 16 MiB, 16 hosts: " << got << " us, closed form " << expected_us << " us");
  CHECK(check == "passed");
  CHECK(got == within(expected_us, 0.01));
}

TEST_CASE("data checking passes for every algorithm and operation, n in {2, 3, 5, 8, 16}, over the network") {
  const char* ops[] = {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "all_to_all", "send_recv"};
  int ran = 0;
  for (const auto& algo : algorithm_names()) {
    for (const char* op : ops) {
      for (const int n : {2, 3, 5, 8, 16}) {
        const std::string local = n >= 8 ? ", local_size: 4" : "";
        const std::string workload = std::string("{kind: collective, op: ") + op + ", algorithm: " + algo +
                                     ", bytes: 96KiB, channels: 2, chunk_bytes: 16KiB, root: 1" + local + "}";
        std::string yaml = nvswitch_domain(n, workload);
        try {
          ScenarioRun run(load_config_text(yaml, "check"));
          run.run();
          CAPTURE(algo);
          CAPTURE(op);
          CAPTURE(n);
          REQUIRE(run.collective()->rows().size() == 1);
          CHECK(run.collective()->rows()[0].data_check == "passed");
          ++ran;
        } catch (const ConfigError& e) {
          // Only combinations the algorithm does not do may be refused, with a reason.
          const std::string what = e.what();
          CAPTURE(what);
          CHECK((what.find("does not do") != std::string::npos || what.find("power-of-two") != std::string::npos ||
                 what.find("send_recv uses") != std::string::npos || what.find("at least two nodes") != std::string::npos));
        }
      }
    }
  }
  MESSAGE(ran << " algorithm/operation/size combinations ran and checked");
  CHECK(ran >= 70);
}

TEST_CASE("non-power-of-two groups get a clear error where the algorithm needs a power of two") {
  CHECK_THROWS_WITH_AS(build_collective("halving_doubling", CollectiveOp::kAllReduce, 6, 1 << 20),
                       "halving_doubling needs a power-of-two group, got 6 ranks", std::invalid_argument);
  CHECK_THROWS_WITH_AS(build_collective("ring", CollectiveOp::kAllToAll, 4, 1 << 20), doctest::Contains("ring does not do all_to_all"),
                       std::invalid_argument);
}

TEST_CASE("a deliberately broken MSCCL ring is caught, naming rank, chunk and the missing contribution") {
  const CollectiveProgram broken = load_msccl_xml(FABRICSIM_SOURCE_DIR "/tests/msccl/ring_allreduce_8_broken.xml", 1 << 20);
  const auto problem = check_program(broken);
  REQUIRE(problem);
  // Rank 3 forwards chunk 0 without its own contribution, so chunk 0 ends without rank 3.
  CHECK(*problem == "wrong result: rank 0 chunk 0 holds {0,1,2,4,5,6,7}, expected {0,1,2,3,4,5,6,7}");
  // And as a workload it is refused before the run.
  const std::string yaml = nvswitch_domain(8, "{kind: collective, op: all_reduce, algorithm: msccl, file: " FABRICSIM_SOURCE_DIR
                                               "/tests/msccl/ring_allreduce_8_broken.xml, bytes: 1MiB}");
  CHECK_THROWS_WITH_AS(ScenarioRun(load_config_text(yaml, "broken")), doctest::Contains("rank 0 chunk 0 holds"), ConfigError);
}

TEST_CASE("a program whose buffers do not hold its chunks is refused, not run off its slots") {
  // The 8-GPU MSCCL ring with nchunksperloop 65536 (a fuzzing find): its in-place buffer
  // holds 8 input chunks and 6 of its own (14 slots), so the 65536 chunks cannot be read.
  std::ifstream in(FABRICSIM_SOURCE_DIR "/tests/msccl/ring_allreduce_8.xml");
  std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "nchunksperloop=\"8\"";
  REQUIRE(xml.find(from) != std::string::npos);
  xml.replace(xml.find(from), from.size(), "nchunksperloop=\"65536\"");
  const std::string path = (std::filesystem::temp_directory_path() / "fabricsim_msccl_65536_chunks.xml").string();
  std::ofstream(path) << xml;
  const CollectiveProgram wide = load_msccl_xml(path, 64 << 10);
  std::filesystem::remove(path);
  CHECK(check_program(wide) == std::optional<std::string>("the input's 65536 chunks from slot 0 do not fit a rank's 14 slots"));
  // A share per rank needs a chunk per rank: an AllGather of one chunk over two ranks.
  CollectiveProgram one;
  one.op = CollectiveOp::kAllGather;
  one.ranks = 2;
  one.chunks = 1;
  one.slots = 2;
  one.programs.resize(2);
  CHECK(check_program(one) == std::optional<std::string>("1 chunks for 2 ranks: expected one per rank or more"));
  // An output past the slots: 4 chunks out from slot 2 of 4.
  one.op = CollectiveOp::kAllReduce;
  one.chunks = 4;
  one.slots = 4;
  one.output_offset = 2;
  CHECK(check_program(one) == std::optional<std::string>("the output's 4 chunks from slot 2 do not fit a rank's 4 slots"));
}

TEST_CASE("sends and receives that do not pair up per sender, receiver and channel are counted in the refusal") {
  // Two ranks, rank 0 sending to rank 1; counted by hand from the steps below.
  const auto program = [](std::vector<Step> sender, std::vector<Step> receiver) {
    CollectiveProgram p;
    p.ranks = 2;
    p.slots = 4;
    p.chunks = 1;
    p.slot_bytes = 1024;
    p.programs = {RankProgram{std::move(sender)}, RankProgram{std::move(receiver)}};
    return p;
  };
  const auto step = [](StepKind kind, int peer, int channel) {
    Step s;
    s.kind = kind;
    s.peer = peer;
    s.channel = channel;
    s.dst = 1 + channel;
    return s;
  };
  const Step send0 = step(StepKind::kSend, 1, 0), send1 = step(StepKind::kSend, 1, 1);
  const Step recv0 = step(StepKind::kRecv, 0, 0), recv1 = step(StepKind::kRecv, 0, 1);
  // Channel 0 twice against one receive; channel 1 once against none; one against two.
  CHECK(check_program(program({send0, send0}, {recv0}), false) == "2 sends but 1 receives from rank 0 to rank 1 on channel 0");
  CHECK(check_program(program({send0, send1}, {recv0}), false) == "1 sends but 0 receives from rank 0 to rank 1 on channel 1");
  CHECK(check_program(program({send1}, {recv0, recv1}), false) == "0 sends but 1 receives from rank 0 to rank 1 on channel 0");
  CHECK(check_program(program({send0}, {recv0, recv0}), false) == "1 sends but 2 receives from rank 0 to rank 1 on channel 0");
  // Paired on both channels, in order: the matching feeds each send its channel's receive.
  ProgramMatching matching;
  CHECK_FALSE(check_program(program({send1, send0}, {recv0, recv1}), false, &matching));
  REQUIRE(matching.feeds[0].size() == 2);
  CHECK(matching.feeds[0][0].front().rank == 1);
  CHECK(matching.feeds[0][0].front().step == 1);
  CHECK(matching.feeds[0][1].front().step == 0);
  CHECK(matching.fed_by[1] == std::vector<int>{1, 1});
}

TEST_CASE("an MSCCL ring AllReduce for 8 GPUs runs within 2% of the built-in ring") {
  std::string check;
  const double msccl = run_us(nvswitch_domain(8, "{kind: collective, op: all_reduce, algorithm: msccl, file: " FABRICSIM_SOURCE_DIR
                                                 "/tests/msccl/ring_allreduce_8.xml, bytes: 64MiB}"), &check);
  CHECK(check == "passed");
  const double builtin = run_us(nvswitch_domain(8, "{kind: collective, op: all_reduce, algorithm: ring, protocol: none, bytes: 64MiB}"));
  MESSAGE("64 MiB AllReduce on 8 GPUs: MSCCL ring " << msccl << " us, built-in ring " << builtin << " us");
  CHECK(msccl == within(builtin, 0.02));
}

TEST_CASE("our YAML step format: a 2-rank AllReduce by exchange, and its errors are located") {
  const std::string steps = R"(
name: exchange
op: all_reduce
ranks: 2
chunks: 1
programs:
  - rank: 0
    steps:
      - {send: 1, chunk: 0}
      - {recv: 1, chunk: 0, reduce: true, after: [0]}
  - rank: 1
    steps:
      - {send: 0, chunk: 0}
      - {recv: 0, chunk: 0, reduce: true, after: [0]}
)";
  CHECK_FALSE(check_program(parse_custom_steps(steps, "exchange.yaml", 1 << 20)));
  // A step with two actions is refused at its line and column.
  const std::string bad = "op: all_reduce\nranks: 2\nchunks: 1\nprograms:\n  - rank: 0\n    steps:\n      - {send: 1, recv: 1, chunk: 0}\n";
  CHECK_THROWS_WITH_AS(parse_custom_steps(bad, "bad.yaml", 1024),
                       "bad.yaml:7:9: error: programs[0].steps[0]: expected exactly one of send, recv, copy, add, nop", ConfigError);
}

TEST_CASE("nccl-tests bus bandwidth factors") {
  CHECK(busbw_factor(CollectiveOp::kAllReduce, 8) == within(2.0 * 7 / 8, 1e-12));
  CHECK(busbw_factor(CollectiveOp::kReduceScatter, 8) == within(7.0 / 8, 1e-12));
  CHECK(busbw_factor(CollectiveOp::kAllGather, 16) == within(15.0 / 16, 1e-12));
  CHECK(busbw_factor(CollectiveOp::kAllToAll, 4) == within(3.0 / 4, 1e-12));
  CHECK(busbw_factor(CollectiveOp::kBroadcast, 8) == 1.0);
  CHECK(busbw_factor(CollectiveOp::kReduce, 8) == 1.0);
}

TEST_CASE("a sweep frees the sizes it has finished with: eight sizes hold at most two executors at the end") {
  // Each size's executor holds its program and per-step state (1.6 MB for a ring over 16
  // ranks and 8 channels); a sweep of many sizes kept them all until the end.
  const std::string yaml = R"(
topology: {kind: nvswitch, gpus: 8, switches: 1, links_per_switch: 18, nvlink_bandwidth: 25GBps, latency: 250ns}
network: {mtu: 64KiB, header_bytes: 64}
workload: {kind: collective, op: all_reduce, algorithm: ring, sizes: {from: 8KiB, to: 1MiB, factor: 2}, check_data: true}
)";
  ScenarioRun run(load_config_text(yaml, "sweep"));
  run.run();
  const CollectiveSweep& sweep = *run.collective();
  REQUIRE(sweep.rows().size() == 8);  // 8 KiB x 2^0..7
  for (const CollectiveRow& row : sweep.rows()) {
    CHECK(row.time > 0);
    CHECK(row.data_check == "passed");
  }
  // The last size, and at most the one before it if its last acknowledgements were
  // still on their way when the last size started.
  CHECK(sweep.executors_held() <= 2);
}

TEST_CASE("NVLinks carry data at their data fraction: the ring AllReduce's closed form at 0.824 of 450 GB/s") {
  // The same closed form as above with B = 18 x 25 GB/s x 0.824 = 370.8 GB/s, NCCL's
  // 20.6 GB/s of data per H100 NVLink (SM90_NVLINK_BW).
  const double n = 8, S = 1 << 30, B = 370.8e9;
  const double step = (kMtu + kHeader) / B + 2 * kL;
  const double expected_us = (2 * (n - 1) / n * S * kWire / B + 2 * (n - 1) * step) * 1e6;
  std::string yaml = nvswitch_domain(8, "{kind: collective, op: all_reduce, algorithm: ring, protocol: none, bytes: 1GiB, check_data: false}");
  yaml.replace(yaml.find("  latency: 250ns"), 0, "  nvlink_data_fraction: 0.824\n");
  CHECK(run_us(yaml) == within(expected_us, 0.01));
  // The presets take NCCL's per-generation figures: 18 x 20.6, 12 x 20.0 and 18 x 40.1 GB/s.
  CHECK(nvswitch_preset("dgx_h100")->gpu_bandwidth().bits_per_second == Bandwidth{2'966'400'000'000}.bits_per_second);
  CHECK(nvswitch_preset("dgx_a100")->gpu_bandwidth().bits_per_second == Bandwidth::gBps(240).bits_per_second);
  CHECK(nvswitch_preset("gb200_nvl72")->gpu_bandwidth().bits_per_second == Bandwidth{5'774'400'000'000}.bits_per_second);
}

TEST_CASE("the tree on one node is NCCL's chain: each GPU talks to the GPUs before and after it only") {
  // On every channel: NCCL 2.29.2's log for 4 H100s prints the same parent for each rank
  // on all 24 channels ("Trees [0] 1/-1/-1->0->-1 ... [23] 1/-1/-1->0->-1" on rank 0;
  // waynehacking8/nccl-collectives-bench, results/scaling_attributed/g4_auto.log), so the
  // middle GPUs carry the data both ways on every channel.
  for (const int channels : {1, 4}) {
    CAPTURE(channels);
    AlgorithmParams a;
    a.channels = channels;
    a.local_size = 4;
    a.one_node = true;
    const CollectiveProgram p = build_collective("tree", CollectiveOp::kAllReduce, 4, 1 << 20, a);
    // Each channel's chain starts at GPU 0: 0 - 1 - 2 - 3, up (reduce) and down
    // (broadcast), for both trees' halves.
    const std::vector<std::set<int>> expected{{1}, {0, 2}, {1, 3}, {2}};
    for (int r = 0; r < 4; ++r) {
      std::set<int> peers;
      int sends = 0;
      for (const Step& s : p.programs[static_cast<std::size_t>(r)].steps) {
        if (s.kind == StepKind::kSend || s.kind == StepKind::kRecv) peers.insert(s.peer);
        sends += s.kind == StepKind::kSend;
      }
      CHECK(peers == expected[static_cast<std::size_t>(r)]);
      // One piece per half and channel (1 MiB / 2 / channels, under 512 KiB): an end GPU
      // sends once per half (up or down), a middle one twice.
      CHECK(sends == channels * 2 * static_cast<int>(expected[static_cast<std::size_t>(r)].size()));
    }
  }
}

TEST_CASE("the tree across 3 nodes: NCCL's trees load the busiest rail 1.5 times its share, each tree's channel on its own queue pair") {
  // NCCL's trees over 3 nodes (src/graph/trees.cc): the chain 0 - 2 - 1 and, shifted by one
  // rank, 1 - 0 - 2. Node 0 is the first tree's root (one child) and the middle of the
  // second; node 2 the middle of the first and a leaf of the second: 3 tree links each,
  // each carrying half the rail's share S / 2 (2 GPUs, 2 channels, one per rail) each way:
  // 1.5 x S / 2 on the busiest rails, at 49.95 GB/s of payload (400 Gb/s, 64 KiB packets
  // and 64 B headers): 4030.6 us for 256 MiB. Node 0 sends on its rail to node 1 (up the
  // second tree) and to node 2 (down both): were both trees' sends to node 2 on one queue
  // pair, the NIC's share for them would be half where they need two thirds, and the trees
  // would run a quarter slower.
  std::string yaml = two_dgx_h100_yaml("{kind: collective, op: all_reduce, algorithm: tree, protocol: none, channels: 2, bytes: 256MiB}",
                                       ", gpus: 2");
  yaml.replace(yaml.find("nodes: 2"), 8, "nodes: 3");
  yaml.replace(yaml.find("nics_per_node: 8"), 16, "nics_per_node: 2");
  yaml.replace(yaml.find("network: {"), 10, "network: {fidelity: flow, ");
  ScenarioRun run(load_config_text(yaml, "tree"));
  run.run();
  REQUIRE(run.complete());
  const CollectiveRow row = run.collective()->rows()[0];
  const double S = 256.0 * 1024 * 1024;
  const double rails_us = 1.5 * S / 2 / (50e9 * 65536 / 65600) * 1e6;
  MESSAGE("tree 256 MiB on 3 x 2 H100: " << to_us(row.time) << " us; the busiest rail's bound " << rails_us << " us");
  CHECK(to_us(row.time) >= rails_us);
  CHECK(to_us(row.time) <= rails_us * 1.08);
}

TEST_CASE("a collective's set-up tells each size's program as it is built and as it is checked") {
  // A ring broadcast over n = 8 ranks on c = 2 channels, in k = 4 pieces a channel (64 KiB
  // over 2 channels in 8 KiB pieces): each piece goes down the chain, n - 1 sends and
  // n - 1 receives, so 2 (n - 1) c k = 112 steps. The first size is checked and prepared;
  // the second is built and checked.
  const std::string yaml = R"(
topology: {kind: nvswitch, gpus: 8, switches: 1, links_per_switch: 18, nvlink_bandwidth: 25GBps, latency: 250ns}
network: {mtu: 64KiB, header_bytes: 64}
workload: {kind: collective, op: broadcast, algorithm: ring, protocol: none, channels: 2, chunk_bytes: 8KiB, sizes: {from: 64KiB, to: 128KiB, factor: 2}, check_data: false}
)";
  std::vector<std::string> notes;
  ScenarioRun run(load_config_text(yaml, "notes"), {}, {}, [&](const std::string& what, double seconds) {
    CHECK(seconds >= 0);
    notes.push_back(what);
  });
  const std::vector<std::string> expected{
      "collective program for 65536 B: built, 8 ranks, 112 steps",
      "collective program for 65536 B: checked and prepared",
      "collective program for 131072 B: built, 8 ranks, 224 steps",  // k = 8
      "collective program for 131072 B: checked",
  };
  CHECK(notes == expected);
}
