// Split runs (run --threads N): the same results for every split, and the partitioner's
// cuts worked out by hand.
#include <doctest/doctest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>
#include <string>

#include "app/config/config_error.h"
#include "app/config/config_loader.h"
#include "app/output/results.h"
#include "app/scenario/scenario.h"
#include "app/scenario/setup_threads.h"
#include "local_process_group.h"
#include "sim/parallel/ordered_pipeline.h"
#include "sim/parallel/parallel_engine.h"
#include "test_support.h"
#include "topologies/fat_tree.h"
#include "topologies/partition.h"

using namespace fabricsim;

namespace {
// P partitions on at most two threads (this machine's cores).
std::string comparable_results(const std::string& yaml, int partitions) {
  ScenarioConfig config = load_config_text(yaml, "<test>");
  config.threads = std::min(partitions, 2);
  config.partitions = partitions;
  ScenarioRun run(std::move(config));
  run.run();
  return without_split_lines(results_json(run));
}

// The same run split over `processes` processes (threads standing in for MPI ranks),
// `threads` threads each. Every process holds the whole run's state at the end: each
// one's results must be the first one's.
std::string comparable_results_over_processes(const std::string& yaml, int processes, int threads,
                                              const std::string& records_path = "") {
  std::vector<std::string> results(static_cast<std::size_t>(processes));
  testing::run_processes(processes, [&](ProcessGroup& group) {
    ScenarioConfig config = load_config_text(yaml, "<test>");
    config.threads = threads;
    config.processes = &group;
    ScenarioRun run(std::move(config));
    if (group.rank() == 0 && !records_path.empty()) run.message_log().record_to(records_path);
    run.run();
    if (group.rank() == 0) run.message_log().finish_records();
    results[static_cast<std::size_t>(group.rank())] = without_split_lines(results_json(run));
  });
  for (int r = 1; r < processes; ++r) CHECK(results[static_cast<std::size_t>(r)] == results[0]);
  return results[0];
}

using Splits = std::vector<std::pair<int, int>>;  // (processes, threads each)

void check_same_over_processes(const std::string& yaml, const Splits& splits = {{2, 1}, {3, 1}, {2, 2}}) {
  const std::string serial = comparable_results(yaml, 0);
  // Threads stand in for the processes here, more of them than this machine has cores:
  // a few splits keep the suite quick (mpirun runs more in tests/cli_test.sh).
  for (const auto& [processes, threads] : splits) {
    CAPTURE(processes);
    CAPTURE(threads);
    CHECK(comparable_results_over_processes(yaml, processes, threads) == serial);
  }
}

void check_same_for_every_split(const std::string& yaml) {
  const std::string serial = comparable_results(yaml, 0);
  REQUIRE(serial.size() > 1000);
  for (int p : {1, 2, 3, 4, 8}) {
    CAPTURE(p);
    CHECK(comparable_results(yaml, p) == serial);
  }
}

const char* kFatTreePermutation = R"(
topology:
  kind: fat_tree
  k: 4
  host_link: {bandwidth: 100Gbps, latency: 1us}
  fabric_link: {bandwidth: 100Gbps, latency: 1us}
network:
  mtu: 4000
  load_balancing: ecmp
  buffer: {size: 1MiB}
  pfc: {classes: [0]}
  queue_sample_interval: 10us
workload: {kind: permutation, bytes: 1000000}
)";

const char* kPoissonLeafSpine = R"(
topology:
  kind: leaf_spine
  leaves: 4
  spines: 2
  hosts_per_leaf: 4
  host_link: {bandwidth: 100Gbps, latency: 1us}
  fabric_link: {bandwidth: 100Gbps, latency: 2us}
network: {mtu: 4000, buffer: {size: 4MiB}, pfc: {}}
workload: {kind: poisson, load: 0.4, duration: 200us, flow_size_cdf: )" FABRICSIM_SOURCE_DIR R"(/configs/flow_cdf/websearch.txt}
)";

// A 4-ring where every flow crosses two hops: a cyclic buffer dependency that PFC locks.
const char* kTorusDeadlock = R"(
topology:
  kind: torus3d
  dims: [4, 1, 1]
  link: {bandwidth: 100Gbps, latency: 1us}
  host_link: {bandwidth: 100Gbps, latency: 1us}
network:
  mtu: 4KiB
  traffic_classes: 2
  ack_traffic_class: 1
  buffer: {size: 512KiB, alpha: 0.125}
  pfc: {classes: [0, 1]}
  deadlock_check_interval: 50us
messages:
  - {src: h0, dst: h2, bytes: 64MiB}
  - {src: h1, dst: h3, bytes: 64MiB}
  - {src: h2, dst: h0, bytes: 64MiB}
  - {src: h3, dst: h1, bytes: 64MiB}
)";
}  // namespace

TEST_CASE("a split run's results are the serial run's: permutation under PFC with queue sampling") {
  check_same_for_every_split(kFatTreePermutation);
}

TEST_CASE("a split run's results are the serial run's: HPCC's telemetry crosses cut links") {
  // The INT stack travels with the packet between partitions' pools.
  check_same_for_every_split(two_flows_yaml("  hpcc: {}\n"));
  check_same_for_every_split(incast_yaml("  ecn: {}\n  dcqcn: {}\n"));
}

TEST_CASE("a split run's results are the serial run's: InfiniBand credits across cut links, and a time limit") {
  // Credit updates cross cut links as frames, as PFC does.
  check_same_for_every_split(incast_yaml("", ", kind: infiniband"));
  // Stopped half way: the same state at the limit.
  check_same_for_every_split(std::string(kFatTreePermutation) + "stop: {time: 40us}\n");
}

TEST_CASE("a split run's results are the serial run's: Poisson arrivals and the load window") {
  check_same_for_every_split(kPoissonLeafSpine);
}

TEST_CASE("a fabric with no work: the split run, like the serial one, ends at time 0") {
  // No workload and no messages: no event is ever scheduled, so the run is over at its
  // start, split or not (a split run once reported -1 from its engine's empty clock).
  const std::string idle = R"(
topology:
  kind: torus3d
  dims: [4, 4, 4]
  link: {bandwidth: 200Gbps, latency: 100ns}
  host_link: {bandwidth: 400Gbps, latency: 100ns}
)";
  const std::string serial = comparable_results(idle, 0);
  CHECK(serial.find("\"sim_time_ps\": 0,") != std::string::npos);
  for (int p : {2, 3}) {
    CAPTURE(p);
    CHECK(comparable_results(idle, p) == serial);
  }
  CHECK(comparable_results_over_processes(idle, 2, 1) == serial);
}

TEST_CASE("a split run gathered onto one thread mid-run gives the serial run's results") {
  const std::string serial = comparable_results(kFatTreePermutation, 0);
  ScenarioConfig config = load_config_text(kFatTreePermutation, "<test>");
  config.threads = 2;
  config.partitions = 4;
  ScenarioRun run(std::move(config));
  REQUIRE(run.parallel() != nullptr);
  run.parallel()->gather_after(50);
  run.run();
  CHECK(without_split_lines(results_json(run)) == serial);
  const ParallelStats& stats = run.parallel()->stats();
  CHECK(stats.gathered_at_window == 50);
  CHECK(stats.windows > 50);  // the rest ran on thread 0 alone
  CHECK(stats.threads == 2);
}

TEST_CASE("a split's work per wall second: threads x wall less their waits, over the wall") {
  // Two threads over 10 ms, waiting 12 ms between them: 20 - 12 = 8 ms of work, 0.8 a
  // wall second: one thread would have been sooner.
  CHECK(work_per_wall(2, 0.010, 0.012) == doctest::Approx(0.8));
  // Waiting 2 ms: 18 ms of work, 1.8 threads' worth: the split pays.
  CHECK(work_per_wall(2, 0.010, 0.002) == doctest::Approx(1.8));
  // Each thread waits 85% of the span (another program holds the cores): 0.3, starved.
  CHECK(work_per_wall(2, 0.010, 0.017) == doctest::Approx(0.3));
  // Four threads over 10 ms waiting 31 ms: 9 ms of work.
  CHECK(work_per_wall(4, 0.010, 0.031) == doctest::Approx(0.9));
}

TEST_CASE("a split run finds the same PFC deadlock, at the same time, as the serial run") {
  const std::string serial = comparable_results(kTorusDeadlock, 0);
  CHECK(serial.find("\"deadlock\": true") != std::string::npos);
  for (int p : {2, 4}) CHECK(comparable_results(kTorusDeadlock, p) == serial);
}

TEST_CASE("a run split over processes gives the serial run's results: PFC, queue sampling, credits, telemetry, a time limit") {
  // Each process builds the whole fabric and runs its block of partitions; cut-link
  // packets cross as bytes, and the counters of what others ran are pooled at the end.
  check_same_over_processes(kFatTreePermutation);
  check_same_over_processes(std::string(kFatTreePermutation) + "stop: {time: 40us}\n");
  check_same_over_processes(incast_yaml("", ", kind: infiniband"));
  // Two 1 GiB flows: some 86,000 windows of 1 us, each a few waits at the stand-in's
  // blocking barrier; one split keeps it to seconds.
  check_same_over_processes(two_flows_yaml("  hpcc: {}\n"), {{3, 1}});
}

TEST_CASE("a run split over processes gives the serial run's results: Poisson arrivals and the load window") {
  check_same_over_processes(kPoissonLeafSpine);
}

TEST_CASE("a run split over processes finds the serial run's PFC deadlock: the same cycle at the same time") {
  // Each process sees only its own ports' queues; the check pools them.
  const std::string serial = comparable_results(kTorusDeadlock, 0);
  REQUIRE(serial.find("\"deadlock\": true") != std::string::npos);
  CHECK(comparable_results_over_processes(kTorusDeadlock, 2, 1) == serial);
  CHECK(comparable_results_over_processes(kTorusDeadlock, 4, 1) == serial);
}

TEST_CASE("a run split over processes writes the serial run's messages.jsonl") {
  const auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::filesystem::remove(path);
    return text.str();
  };
  const std::string path = test_temp_path("fabricsim_records_processes.jsonl").string();
  {
    ScenarioRun run(load_config_text(kFatTreePermutation, "<test>"));
    run.message_log().record_to(path);
    run.run();
    run.message_log().finish_records();
  }
  const std::string serial = read(path);
  REQUIRE(std::count(serial.begin(), serial.end(), '\n') == 16);
  comparable_results_over_processes(kFatTreePermutation, 3, 1, path);
  CHECK(read(path) == serial);
}

TEST_CASE("one message across a cut link takes the closed-form time") {
  // a - s - b, 100G, 1 us links; a and b in different partitions. 1,000,000 B in 4,000 B
  // packets of 4,048 B on the wire: 250 x 323.84 ns = 80.96 us to send, one more packet
  // behind the pipeline at s (323.84 ns), 2 x 1 us of wire; the ack (64 B: 5.12 ns a hop)
  // comes back over 2 hops: 2 x (1 us + 5.12 ns).
  ScenarioConfig config = load_config_text(R"(
topology:
  kind: custom
  hosts: [a, b]
  switches: [s]
  links:
    - {a: a, b: s, bandwidth: 100Gbps, latency: 1us}
    - {a: s, b: b, bandwidth: 100Gbps, latency: 1us}
network: {mtu: 4000, header_bytes: 48, ack_bytes: 64}
messages:
  - {src: a, dst: b, bytes: 1000000}
)", "<test>");
  // CHECK, not REQUIRE: it also runs on the threads standing in for processes.
  const auto check = [](const ScenarioRun& run) {
    CHECK(run.complete());
    const Message& m = run.network().messages()[0];
    CHECK(m.delivered == 250 * 323'840 + 323'840 + 2 * 1'000'000);
    CHECK(m.finished == m.delivered + 2 * (1'000'000 + 5'120));
    // Counted where it ran, known everywhere: 250 data packets received, one ack per
    // packet sent back (the default ack interval).
    CHECK(run.network().nic(1).counters().data_packets_received == 250);
    CHECK(run.network().nic(1).counters().acks_sent == 250);
  };
  SUBCASE("on two threads") {
    config.threads = 2;
    ScenarioRun run(std::move(config));
    REQUIRE(run.parallel() != nullptr);
    CHECK(run.parallel()->stats().cut_links == 1);
    CHECK(run.parallel()->stats().lookahead == us(1));
    run.run();
    check(run);
  }
  SUBCASE("over two processes: the message's sender and receiver ran in different ones") {
    testing::run_processes(2, [&](ProcessGroup& group) {
      ScenarioConfig c = config;
      c.processes = &group;
      ScenarioRun run(std::move(c));
      CHECK(run.parallel()->stats().processes == 2);
      CHECK(run.parallel()->owns(run.network().host_partition(0)) == (group.rank() == 0));
      run.run();
      check(run);
    });
  }
}

TEST_CASE("the partitioner cuts a k=4 fat-tree between pods and spreads the cores") {
  // k=4: 16 hosts, pods of 4 hosts, 2 edge and 2 aggregation switches each; 4 cores,
  // each with one link into every pod. Two partitions: pods 0-1 and 2-3; each core
  // has two links on each side, a tie, so cores go to the partition with fewer ports
  // (alternately) and two of each core's links are cut: 8.
  FatTreeSpec spec;
  spec.k = 4;
  spec.host_link = spec.edge_link = spec.core_link = LinkSpec{Bandwidth::gbps(100), us(1)};
  const Topology t = fat_tree_topology(spec);
  const Partitioning split = partition_topology(t, 2);
  for (std::uint32_t h = 0; h < 16; ++h) CHECK(split.node_partition[t.host_node(h)] == (h < 8 ? 0u : 1u));
  CHECK(split.cut_links == 8);
  CHECK(split.ports[0] == split.ports[1]);
}

TEST_CASE("the partitioner keeps a DGX node whole: only fabric links are cut") {
  const ScenarioConfig config = load_config_text(two_dgx_h100_yaml(""), "<test>");
  const Topology t = build_topology(config.topology);
  const Partitioning split = partition_topology(t, 2);
  // Every link shorter than the fabric's (NVLink, PCIe) stays inside a partition.
  for (const TopologyLink& l : t.links()) {
    if (split.node_partition[l.a] != split.node_partition[l.b]) CHECK(l.latency == ns(500));
  }
  CHECK(split.lookahead == ns(500));
  for (std::uint32_t g = 0; g < 8; ++g) CHECK(split.node_partition[t.host_node(g)] == 0);
  for (std::uint32_t g = 8; g < 16; ++g) CHECK(split.node_partition[t.host_node(g)] == 1);
}

TEST_CASE("workloads that cannot be split yet are refused with a located error") {
  const auto refused = [](const std::string& yaml, const std::string& key, ProcessGroup* processes = nullptr) {
    ScenarioConfig config = load_config_text(yaml, "<test>");
    config.threads = 2;
    config.processes = processes;
    try {
      ScenarioRun run(std::move(config));
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).find(key) != std::string::npos);
    }
  };
  // SHARP's sums are opened by whichever member contributes first.
  refused(two_dgx_h100_yaml("{kind: collective, op: all_reduce, algorithm: collnet, check_data: false, sizes: {from: 1MiB, to: 1MiB}}",
                            "", ", sharp: {bandwidth: 100GBps}"),
          "workload.algorithm");
  // Data checking follows every rank's data in one verifier, in one process's memory.
  testing::run_processes(2, [&](ProcessGroup& group) {
    refused(two_dgx_h100_yaml("{kind: collective, op: all_reduce, sizes: {from: 1MiB, to: 1MiB}}"), "workload.check_data", &group);
  });
  // An ideal network hands data from rank to rank in no time.
  const auto path = test_temp_path("fabricsim_ideal_split.jsonl");
  {
    std::ofstream f(path);
    f << R"({"fabricsim_trace": 1, "ranks": 2, "achieved_tflops": 100})" << "\n";
    for (int r = 0; r < 2; ++r) f << R"({"rank": )" << r << R"(, "id": 0, "kind": "compute", "duration_us": 1})" << "\n";
  }
  refused(two_dgx_h100_yaml("{kind: trace, file: " + path.string() + ", network: ideal}"), "workload.network");
  std::filesystem::remove(path);
}

TEST_CASE("a collective sweep split over threads or processes gives the serial run's results, for every algorithm kind") {
  // Two DGX H100 nodes cut between the nodes (lookahead: the 500 ns fabric links): NVLink
  // and NVSwitch inside a partition, InfiniBand credits across the cut. Each size starts
  // one notice (the longest link, 500 ns) after the last rank finished the one before.
  for (const std::string algo : {"ring, channels: 8", "tree, channels: 2", "nvls_tree", "auto, protocol: auto"}) {
    CAPTURE(algo);
    const std::string yaml = two_dgx_h100_yaml("{kind: collective, op: all_reduce, algorithm: " + algo +
                                               ", check_data: false, sizes: {from: 256KiB, to: 4MiB, factor: 4}}");
    const std::string serial = comparable_results(yaml, 0);
    REQUIRE(serial.find("\"busbw_GBps\"") != std::string::npos);
    CHECK(comparable_results(yaml, 2) == serial);
    // Over processes: a sender's message to another process's rank opens its receive there
    // by a notice between windows; the ranks' ends are pooled.
    CHECK(comparable_results_over_processes(yaml, 2, 1) == serial);
  }
  // Data checking on threads: one verifier under a lock, checked once the last rank is done.
  const std::string checked = two_dgx_h100_yaml("{kind: collective, op: all_reduce, algorithm: ring, channels: 2, "
                                                "sizes: {from: 256KiB, to: 1MiB, factor: 4}}");
  const std::string checked_serial = comparable_results(checked, 0);
  CHECK(checked_serial.find("\"data_check\": \"passed\"") != std::string::npos);
  CHECK(checked_serial.find("\"data_check\": \"not finished\"") == std::string::npos);
  CHECK(comparable_results(checked, 2) == checked_serial);
  // And over an uneven split: three partitions of a four-node cluster.
  const std::string four = two_dgx_h100_yaml("{kind: collective, op: all_gather, algorithm: ring, channels: 4, check_data: false, "
                                             "sizes: {from: 1MiB, to: 2MiB}}");
  std::string yaml = four;
  yaml.replace(yaml.find("nodes: 2"), 8, "nodes: 4");
  const std::string serial = comparable_results(yaml, 0);
  for (int p : {2, 3, 4}) {
    CAPTURE(p);
    CHECK(comparable_results(yaml, p) == serial);
  }
  CHECK(comparable_results_over_processes(yaml, 2, 2) == serial);
  CHECK(comparable_results_over_processes(yaml, 3, 1) == serial);
}

TEST_CASE("each size of a sweep starts one notice after the last rank finished the one before") {
  // Two ranks on h0 and h1 of a star (100 Gb/s, 1 us links; the longest link, the notice,
  // is 1 us). Ring AllReduce of 80 KiB, then 160 KiB: each size is two steps of an n-packet
  // message each way, (n + 1) x 332.8 ns + 2 us each, with one 64 B ack (5.12 ns) between
  // them. The run ends when the last message's ack is back: two links of 5.12 ns + 1 us.
  const std::string yaml = R"(
topology:
  kind: custom
  hosts: [h0, h1]
  switches: [s]
  links:
    - {a: h0, b: s, bandwidth: 100Gbps, latency: 1us}
    - {a: h1, b: s, bandwidth: 100Gbps, latency: 1us}
network: {mtu: 4KiB, header_bytes: 64, ack_bytes: 64, ack_interval: 1000}
workload: {kind: collective, op: all_reduce, algorithm: ring, check_data: false, sizes: {from: 80KiB, to: 160KiB}}
)";
  const auto message_time = [](int packets) { return (packets + 1) * 332'800 + 2 * us(1); };
  const Time first = 2 * message_time(10) + 5'120;
  const Time second = 2 * message_time(20) + 5'120;
  for (int p : {0, 2}) {
    CAPTURE(p);
    ScenarioConfig config = load_config_text(yaml, "<test>");
    config.threads = std::min(p, 2);
    config.partitions = p;
    ScenarioRun run(std::move(config));
    run.run();
    REQUIRE(run.complete());
    REQUIRE(run.collective()->rows().size() == 2);
    CHECK(run.collective()->rows()[0].time == first);
    CHECK(run.collective()->rows()[1].time == second);
    CHECK(run.sim_time() == first + us(1) + second + 2 * (5'120 + us(1)));
  }
}

TEST_CASE("a training trace split over threads or processes gives the serial run's results") {
  // 16 ranks on 2 DGX H100 nodes, split between the nodes. Each rank computes, all-reduces
  // with its node (tensor parallel: inside one partition, started at once), all-reduces
  // with its peer on the other node (data parallel: across the cut, started one notice
  // after the last member arrived), sends a pipeline activation to the next node, and
  // computes again; node 1's ranks wait for node 0's activation. Ranks are slowed unevenly
  // so the collectives' members arrive at different times.
  const auto path = test_temp_path("fabricsim_split_trace.jsonl");
  {
    std::ofstream f(path);
    f << R"({"fabricsim_trace": 1, "ranks": 16, "achieved_tflops": 100})" << "\n";
    for (int r = 0; r < 16; ++r) {
      const int node = r / 8, local = r % 8;
      const std::string rank = R"({"rank": )" + std::to_string(r);
      f << rank << R"(, "id": 0, "kind": "compute", "duration_us": )" << 5 + 3 * local + node << R"(, "label": "fwd"})" << "\n";
      f << rank << R"(, "id": 1, "kind": "collective", "op": "all_reduce", "bytes": 1048576, "key": "tp)" << node
        << R"(", "group": [)" << 8 * node << "," << 8 * node + 1 << "," << 8 * node + 2 << "," << 8 * node + 3 << ","
        << 8 * node + 4 << "," << 8 * node + 5 << "," << 8 * node + 6 << "," << 8 * node + 7
        << R"(], "deps": [0], "label": "tp"})" << "\n";
      if (node == 0) {
        f << rank << R"(, "id": 2, "kind": "send", "peer": )" << r + 8 << R"(, "bytes": 262144, "tag": 7, "deps": [1], "label": "pp"})" << "\n";
      } else {
        f << rank << R"(, "id": 2, "kind": "recv", "peer": )" << r - 8 << R"(, "bytes": 262144, "tag": 7, "deps": [1], "label": "pp"})" << "\n";
      }
      f << rank << R"(, "id": 3, "kind": "collective", "op": "all_reduce", "bytes": 2097152, "key": "dp)" << local
        << R"(", "group": [)" << local << "," << local + 8 << R"(], "deps": [2], "label": "dp"})" << "\n";
      f << rank << R"(, "id": 4, "kind": "compute", "duration_us": 4, "deps": [3], "label": "opt"})" << "\n";
    }
  }
  const std::string yaml = two_dgx_h100_yaml("{kind: trace, file: " + path.string() + ", algorithm: ring, channels: 2}");
  const std::string serial = comparable_results(yaml, 0);
  REQUIRE(serial.find("\"iteration_time_us\": ") != std::string::npos);
  REQUIRE(serial.find("\"iteration_time_us\": null") == std::string::npos);  // the step finished
  for (int p : {2, 3}) {
    CAPTURE(p);
    CHECK(comparable_results(yaml, p) == serial);
  }
  // Over processes: arrivals at the DP collectives are pooled between windows, the
  // pipeline sends open their receives by notice, and the ranks' operations are pooled
  // at the end.
  CHECK(comparable_results_over_processes(yaml, 2, 1) == serial);
  CHECK(comparable_results_over_processes(yaml, 2, 2) == serial);
  std::filesystem::remove(path);
}

TEST_CASE("several jobs split over threads or processes give the serial run's results") {
  // Two ring AllReduce jobs interleaved on a two-leaf fabric share its spine: each job's
  // sizes start one notice after its own previous size ends.
  const std::string yaml = R"(
topology: {kind: leaf_spine, leaves: 2, spines: 1, hosts_per_leaf: 2, host_link: {bandwidth: 100Gbps}, fabric_link: {bandwidth: 100Gbps}}
network: {mtu: 4KiB}
jobs:
  - {name: a, placement: [h0, h2], workload: {kind: collective, op: all_reduce, algorithm: ring, sizes: {from: 1MiB, to: 4MiB}, check_data: false}}
  - {name: b, placement: [h1, h3], workload: {kind: collective, op: all_reduce, algorithm: ring, sizes: {from: 2MiB, to: 4MiB}, check_data: false}}
)";
  const std::string serial = comparable_results(yaml, 0);
  REQUIRE(serial.find("\"jobs\"") != std::string::npos);
  CHECK(comparable_results(yaml, 2) == serial);
  CHECK(comparable_results_over_processes(yaml, 2, 1) == serial);
}

TEST_CASE("failures during the run split over threads or processes give the serial run's results") {
  // A spine fails at 1 ms (routes change 100 us later) and a leaf-spine cable at 1.5 ms,
  // during a ring AllReduce over 16 hosts on InfiniBand (credits): each partition takes
  // down its own ports and installs its own nodes' routes, first at the failure's time.
  const std::string yaml = R"(
topology:
  kind: leaf_spine
  leaves: 2
  spines: 4
  hosts_per_leaf: 8
  host_link: {bandwidth: 100Gbps, latency: 500ns, kind: infiniband}
  fabric_link: {bandwidth: 100Gbps, latency: 500ns, kind: infiniband}
network: {mtu: 4KiB}
workload: {kind: collective, op: all_reduce, algorithm: ring, channels: 4, bytes: 16MiB, check_data: false}
faults: [{switch: spine0, down: true, at: 1ms, detection: 100us}, {link: [leaf1, spine2], down: true, at: 1500us, detection: 50us}]
)";
  const std::string serial = comparable_results(yaml, 0);
  REQUIRE(serial.find("\"at_ps\": 1000000000") != std::string::npos);
  CHECK(comparable_results(yaml, 2) == serial);
  CHECK(comparable_results(yaml, 4) == serial);
  CHECK(comparable_results_over_processes(yaml, 2, 1) == serial);
  CHECK(comparable_results_over_processes(yaml, 2, 2) == serial);
}

TEST_CASE("a custom graph is split as a graph: two islands joined by one link, hosts numbered across them") {
  // Islands A (switches a0, a1) and B (b0, b1), each a pair of switches with two hosts on
  // each; hosts named alternately from A and B, so runs of host numbers mix the islands.
  // One link joins a1 and b0. METIS keeps each island whole and cuts only that link.
  std::string yaml = R"(
topology:
  kind: custom
  hosts: [h0, h1, h2, h3, h4, h5, h6, h7]
  switches: [a0, a1, b0, b1]
  links:
    - {a: h0, b: a0, bandwidth: 100Gbps, latency: 1us}
    - {a: h2, b: a0, bandwidth: 100Gbps, latency: 1us}
    - {a: h4, b: a1, bandwidth: 100Gbps, latency: 1us}
    - {a: h6, b: a1, bandwidth: 100Gbps, latency: 1us}
    - {a: h1, b: b0, bandwidth: 100Gbps, latency: 1us}
    - {a: h3, b: b0, bandwidth: 100Gbps, latency: 1us}
    - {a: h5, b: b1, bandwidth: 100Gbps, latency: 1us}
    - {a: h7, b: b1, bandwidth: 100Gbps, latency: 1us}
    - {a: a0, b: a1, bandwidth: 100Gbps, latency: 1us}
    - {a: b0, b: b1, bandwidth: 100Gbps, latency: 1us}
    - {a: a1, b: b0, bandwidth: 100Gbps, latency: 1us}
network: {mtu: 4000}
messages:
  - {src: h0, dst: h1, bytes: 100000}
  - {src: h3, dst: h6, bytes: 100000}
)";
  ScenarioConfig config = load_config_text(yaml, "<test>");
  config.threads = 2;
  ScenarioRun run(std::move(config));
  if (!graph_partitioner_available()) {
    MESSAGE("built without METIS: the custom graph splits by structure");
    CHECK(std::string(run.partitioner()) == "structure");
    return;
  }
  CHECK(std::string(run.partitioner()) == "metis");
  CHECK(run.parallel()->stats().cut_links == 1);
  for (HostId h = 0; h < 8; ++h) CHECK(run.network().host_partition(h) == run.network().host_partition(h % 2));
  CHECK(run.network().host_partition(0) != run.network().host_partition(1));
  run.run();
  CHECK(run.complete());
  // The structural split (runs of host numbers) would cut more.
  const ScenarioConfig again = load_config_text(yaml, "<test>");
  CHECK(partition_topology(build_topology(again.topology), 2).cut_links > 1);
}

TEST_CASE("a split run streams the same messages.jsonl as the serial run, by finish time then name") {
  const auto records = [](int partitions) {
    ScenarioConfig config = load_config_text(kFatTreePermutation, "<test>");
    if (partitions > 0) {
      config.threads = std::min(partitions, 2);
      config.partitions = partitions;
    }
    const std::string path = test_temp_path("fabricsim_records_" + std::to_string(partitions) + ".jsonl").string();
    {
      ScenarioRun run(std::move(config));
      run.message_log().record_to(path);
      run.run();
      run.message_log().finish_records();
    }
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::filesystem::remove(path);
    return text.str();
  };
  const std::string serial = records(0);
  // One line per host: the permutation's 16 messages, ordered by finish time, then id.
  std::istringstream lines(serial);
  std::string line;
  std::vector<std::pair<long long, long long>> order;
  while (std::getline(lines, line)) {
    const auto field = [&](const std::string& key) {
      const std::size_t at = line.find("\"" + key + "\":") + key.size() + 3;
      return std::stoll(line.substr(at));
    };
    order.emplace_back(field("finish_ps"), field("id"));
  }
  CHECK(order.size() == 16);
  CHECK(std::is_sorted(order.begin(), order.end()));
  for (int p : {2, 4, 8}) {
    CAPTURE(p);
    CHECK(records(p) == serial);
  }
}

TEST_CASE("RDMA NICs split: the same results on threads and over processes, losses and a collective included") {
  // A NIC and its GPUs may land in different partitions (PCIe is as long as the fabric's
  // links here): the sender opens the receive at the destination NIC, in another
  // partition or (by notice) another process, and work requests cross cut links.
  const std::string fabric = R"(
topology:
  kind: cluster
  nodes: 3
  node: {preset: dgx_h100}
  nics_per_node: 8
  nic_model: rdma
  pcie: {bandwidth: 64GBps, latency: 500ns}
  nic: {bandwidth: 400Gbps, latency: 500ns}
  fabric: {kind: rail_optimized, spines: 2, fabric_link: {bandwidth: 400Gbps, latency: 500ns}}
network: {mtu: 4KiB, queue_capacity: 64KiB}
)";
  const std::string incast = fabric + R"(messages:
  - {src: n0.gpu0, dst: n2.gpu0, bytes: 2MiB}
  - {src: n1.gpu0, dst: n2.gpu0, bytes: 2MiB}
  - {src: n0.gpu3, dst: n1.gpu5, bytes: 1MiB, start: 3us}
)";
  check_same_for_every_split(incast);
  check_same_over_processes(incast, {{2, 1}, {3, 1}});
  const std::string ring = fabric + R"(workload: {kind: collective, op: all_reduce, algorithm: ring, channels: 2,
           sizes: {from: 1MiB, to: 2MiB}, check_data: false}
)";
  check_same_for_every_split(ring);
  check_same_over_processes(ring, {{2, 1}});
}

TEST_CASE("items made on several threads are taken in order, each from its own slot") {
  // Item i's value is i * i + 1, made into slot i % slots; the take must find it there,
  // in order 0, 1, 2, ..., for every mix of threads and slots, each item made once.
  struct Slot {
    std::uint64_t value = 0;
    std::atomic<int> users{0};  // makes or takes on it at once: never more than one
  };
  constexpr std::uint32_t kItems = 60;
  for (const int threads : {1, 2, 3, 4}) {
    for (const std::size_t slot_count : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{8}}) {
      CAPTURE(threads);
      CAPTURE(slot_count);
      std::vector<Slot> slots(slot_count);
      std::vector<std::atomic<int>> made(kItems);
      std::vector<std::uint32_t> order;
      std::atomic<bool> overlap{false};
      run_in_order(
          kItems, threads, slots,
          [&](std::uint32_t i, Slot& s) {
            if (s.users.fetch_add(1) != 0) overlap = true;
            if (i % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));  // later items finish first
            s.value = std::uint64_t{i} * i + 1;
            made[i].fetch_add(1);
            s.users.fetch_sub(1);
          },
          [&](std::uint32_t i, Slot& s) {
            if (s.users.fetch_add(1) != 0) overlap = true;
            CHECK(s.value == std::uint64_t{i} * i + 1);
            order.push_back(i);
            s.users.fetch_sub(1);
          });
      CHECK_FALSE(overlap.load());
      REQUIRE(order.size() == kItems);
      for (std::uint32_t i = 0; i < kItems; ++i) {
        CHECK(order[i] == i);
        CHECK(made[i].load() == 1);
      }
    }
  }
}

TEST_CASE("an item that fails to be made or taken stops the rest and is rethrown to the caller") {
  for (const int threads : {1, 2, 4}) {
    CAPTURE(threads);
    std::vector<int> slots(4);
    std::uint32_t taken = 0;
    CHECK_THROWS_WITH_AS(run_in_order(
                             100, threads, slots,
                             [](std::uint32_t i, int& s) {
                               if (i == 7) throw std::runtime_error("item 7");
                               s = static_cast<int>(i);
                             },
                             [&](std::uint32_t, int&) { ++taken; }),
                         "item 7", std::runtime_error);
    CHECK(taken <= 7);  // items 0 to 6 at most: never item 7 or one after it
    taken = 0;
    CHECK_THROWS_WITH_AS(run_in_order(
                             100, threads, slots, [](std::uint32_t i, int& s) { s = static_cast<int>(i); },
                             [&](std::uint32_t i, int&) {
                               if (i == 5) throw std::invalid_argument("take 5");
                               ++taken;
                             }),
                         "take 5", std::invalid_argument);
    CHECK(taken == 5);
  }
}

TEST_CASE("set-up threads: --threads when given, every core (at most 16) for a large flow-level run, else one") {
  ScenarioConfig flow;
  flow.network.fidelity = NetworkConfig::Fidelity::kFlow;
  MemoryEstimate large;
  large.routes = kLargeFlowSetup;  // exactly the threshold counts as large
  MemoryEstimate small;
  small.routes = kLargeFlowSetup - 1;
  CHECK(setup_threads(flow, large, 8) == 8);
  CHECK(setup_threads(flow, large, 64) == 16);
  CHECK(setup_threads(flow, large, 0) == 1);  // hardware_concurrency() unknown
  CHECK(setup_threads(flow, small, 8) == 1);
  ScenarioConfig asked = flow;
  asked.threads = 3;
  CHECK(setup_threads(asked, large, 8) == 3);
  CHECK(setup_threads(asked, small, 8) == 3);
  ScenarioConfig packet;  // a packet-level run's threads split the run itself
  CHECK(setup_threads(packet, large, 8) == 1);
}

TEST_CASE("split threads: a packet-level run splits itself unasked into partitions of 64 hosts or more, up to every core (at most 16), where its longest links are 100 ns or more") {
  ScenarioConfig packet;
  CHECK(split_threads(packet, 8192, us(1), true, 2) == 2);  // k=32's 8,192 hosts on a 2-core machine
  CHECK(split_threads(packet, 1024, us(1), true, 64) == 16);  // 1,024 / 64 = 16, the most
  CHECK(split_threads(packet, 1023, us(1), true, 64) == 15);  // 1,023 / 64 = 15.98: 15 partitions
  CHECK(split_threads(packet, 128, us(1), true, 2) == 2);  // k=8: two partitions of 64 hosts
  CHECK(split_threads(packet, 128, us(1), true, 16) == 2);  // ...and no more on 16 cores
  CHECK(split_threads(packet, 127, us(1), true, 16) == 0);  // 127 / 64 = 1.98: one queue
  CHECK(split_threads(packet, 16, us(1), true, 16) == 0);  // two DGX nodes: one queue
  CHECK(split_threads(packet, 8192, us(1), true, 1) == 0);  // one core: nothing to split over
  CHECK(split_threads(packet, 8192, us(1), true, 0) == 0);  // the core count unknown
  CHECK(split_threads(packet, 8192, us(1), false, 8) == 0);  // an event limit, an ideal network, SHARP
  CHECK(split_threads(packet, 8192, ns(100), true, 2) == 2);  // exactly the least lookahead counts
  CHECK(split_threads(packet, 8192, ns(99), true, 2) == 0);  // windows of under 100 ns: one queue
  ScenarioConfig asked = packet;
  asked.threads = 3;
  CHECK(split_threads(asked, 128, us(1), true, 8) == 3);
  CHECK(split_threads(asked, 8192, us(1), false, 8) == 3);  // asked: refused later with the reason
  ScenarioConfig flow;
  flow.network.fidelity = NetworkConfig::Fidelity::kFlow;
  CHECK(split_threads(flow, 99968, us(1), true, 16) == 0);  // one solver: its set-up takes the threads
}

TEST_CASE("usable cores: FABRICSIM_CORES when it is a number from 1 to 1024, else the CPUs this process may run on") {
  const char* before = std::getenv("FABRICSIM_CORES");
  const std::string kept = before != nullptr ? before : "";
  ::unsetenv("FABRICSIM_CORES");
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  const unsigned affinity = static_cast<unsigned>(CPU_COUNT(&allowed));
  CHECK(usable_cores() == affinity);
  ::setenv("FABRICSIM_CORES", "3", 1);
  CHECK(usable_cores() == 3);
  for (const char* bad : {"0", "two", "3x", "2000", ""}) {
    ::setenv("FABRICSIM_CORES", bad, 1);
    CHECK(usable_cores() == affinity);
  }
  if (before != nullptr) {
    ::setenv("FABRICSIM_CORES", kept.c_str(), 1);
  } else {
    ::unsetenv("FABRICSIM_CORES");
  }
}
