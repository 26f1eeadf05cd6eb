// What-if runs: degraded and failed links and switches, and stragglers, against
// hand-worked times.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "app/config/config_error.h"
#include "app/config/config_loader.h"
#include "app/scenario/scenario.h"
#include "test_support.h"

using namespace fabricsim;

namespace {

// Four GPUs on one switch, 100 Gb/s links of 1 us; acks once per 1000 packets.
const std::string kStar = star_yaml(4, "1us") + "network: {mtu: 4KiB, header_bytes: 64, ack_bytes: 64, ack_interval: 1000}\n";

Time ring_time(const std::string& extra) {
  ScenarioRun run(load_config_text(std::string(kStar) + R"(
workload: {kind: collective, op: all_reduce, algorithm: ring, bytes: 4MiB, channels: 1}
)" + extra,
                                   "ring"));
  run.run();
  REQUIRE(run.complete());
  return run.collective()->rows()[0].time;
}

}  // namespace

TEST_CASE("a link at half bandwidth sets a ring AllReduce's pace: the closed form of its slowest link") {
  // g1's cable at 50 Gb/s. Every step of the ring (2(n-1) = 6 of them, 1 MiB each) waits
  // for its slowest message, the one crossing that cable: 256 packets of 4160 B pipelined
  // at 50 Gb/s (665.6 ns each), plus one at 100 Gb/s on the other hop (332.8 ns) and two
  // 1 us latencies. 6 x (256 x 665.6 + 332.8 + 2000) ns = 1,036,358.4 ns.
  const Time degraded = ring_time("faults: [{link: [g1, s], bandwidth: 50Gbps}]\n");
  const double expected = 6 * (256 * 665.6 + 332.8 + 2000) * 1000;
  CHECK(static_cast<double>(degraded) == doctest::Approx(expected).epsilon(0.01));
  // Healthy, the same steps at 100 Gb/s: 6 x (257 x 332.8 + 2000) ns.
  const Time healthy = ring_time("");
  CHECK(static_cast<double>(healthy) == doctest::Approx(6 * (257 * 332.8 + 2000) * 1000).epsilon(0.01));
  // 5 us more on g2's cable: a step waits for the step before it on the previous rank,
  // so the run is its longest chain of 6 consecutive hops g(i) -> g(i+1). The chain from
  // g1 (g1>g2, g2>g3, g3>g0, g0>g1, g1>g2, g2>g3) crosses g2's cable 4 times: + 20 us.
  const Time late = ring_time("faults: [{link: [g2, s], extra_latency: 5us}]\n");
  CHECK(late - healthy == doctest::Approx(4 * us(5)).epsilon(0.01));
}

TEST_CASE("a core switch down: routes go around it and every flow completes") {
  // k=4 fat-tree, core0 down: its 4 links are gone, and the permutation still completes
  // over the three other cores.
  ScenarioRun run(load_config_text(fat_tree_k4_yaml() + R"(
workload: {kind: permutation, bytes: 256KiB}
faults: [{switch: core0, down: true}]
)",
                                   "core_down"));
  CHECK(run.applied_faults().size() == 4);
  for (const AppliedFault& f : run.applied_faults()) CHECK((f.a == "core0" || f.b == "core0"));
  run.run();
  CHECK(run.complete());
  const std::uint32_t core0 = *run.topology().find("core0");
  for (const TopologyLink& l : run.topology().links()) CHECK((l.a != core0 && l.b != core0));
}

TEST_CASE("a random fraction of a tier goes down, the same links for the same seed") {
  const auto down = [](int seed) {
    ScenarioRun run(load_config_text(fat_tree_k4_yaml() + "faults: [{tier: agg-core, fraction: 0.25, seed: " + std::to_string(seed) +
                                         ", down: true}]\n",
                                     "tier_down"));
    std::vector<std::string> links;
    for (const AppliedFault& f : run.applied_faults()) links.push_back(f.a + "-" + f.b);
    return links;
  };
  // 16 agg-core links: a quarter is 4.
  CHECK(down(7).size() == 4);
  CHECK(down(7) == down(7));
}

TEST_CASE("faults that name nothing or cut the fabric are located errors") {
  const auto error_of = [](const std::string& faults) {
    try {
      ScenarioRun run(load_config_text(std::string(kStar) + faults, "bad_fault"));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("faults: [{link: [g1, nowhere], down: true}]\n").find("faults[0]") != std::string::npos);
  CHECK(error_of("faults: [{link: [g1, nowhere], down: true}]\n").find("no node is named 'nowhere'") != std::string::npos);
  CHECK(error_of("faults: [{link: [g1, g2], down: true}]\n").find("no link joins") != std::string::npos);
  CHECK(error_of("faults: [{switch: s, down: true}]\n").find("has no link") != std::string::npos);
  CHECK(error_of("faults: [{link: [g1, s], bandwidth: 400Gbps}]\n").find("slower than it was") != std::string::npos);
  CHECK(error_of("faults: [{link: [g1, s]}]\n").find("expected a map naming") != std::string::npos);
  CHECK(error_of("faults: [{tier: spine, down: true}]\n").find("this fabric's tiers") != std::string::npos);
}

TEST_CASE("a straggler at 1.5x compute delays a DP step by exactly its extra compute") {
  // Four ranks compute 200 us, then all-reduce 1 MiB (which starts when every member has
  // reached it), then compute 100 us. Rank 2 at 1.5x reaches the AllReduce 100 us late,
  // and its last compute takes 150 us: the critical path is rank 2's, 300 + A + 150 us
  // against 200 + A + 100 us healthy, 150 us longer whatever the AllReduce's time A.
  const auto dir = test_temp_path("fabricsim_straggler_test");
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "dp.jsonl");
    f << R"({"fabricsim_trace": 1, "ranks": 4, "achieved_tflops": 100})" << "\n";
    for (int r = 0; r < 4; ++r) {
      f << R"({"rank": )" << r << R"(, "id": 0, "kind": "compute", "duration_us": 200, "deps": [], "label": "bwd"})" << "\n";
      f << R"({"rank": )" << r
        << R"(, "id": 1, "kind": "collective", "op": "all_reduce", "bytes": 1048576, "key": "dp0", "group": [0,1,2,3], "deps": [0], "label": "dp"})"
        << "\n";
      f << R"({"rank": )" << r << R"(, "id": 2, "kind": "compute", "duration_us": 100, "deps": [1], "label": "opt"})" << "\n";
    }
  }
  const auto iteration = [&](const std::string& stragglers) {
    const std::string config = std::string(kStar) + "workload: {kind: trace, file: " + (dir / "dp.jsonl").string() +
                               stragglers + "}\n";
    ScenarioRun run(load_config_text(config, "straggler"));
    run.run();
    REQUIRE(run.complete());
    return run.replay()->iteration_time();
  };
  const Time healthy = iteration("");
  const Time slow = iteration(", stragglers: [{rank: 2, compute: 1.5}]");
  CHECK(slow - healthy == us(150));
  CHECK(healthy > us(300));
  // Drawn: a quarter of four ranks is one, at 1.5x: the same 150 us whichever it is; with
  // factors drawn from [1.5, 2.0] the step is 150 to 300 us longer, the same for a seed.
  CHECK(iteration(", stragglers: [{fraction: 0.25, compute: 1.5, seed: 9}]") - healthy == us(150));
  const Time drawn = iteration(", stragglers: [{fraction: 0.25, compute: 1.5, compute_max: 2.0, seed: 9}]");
  CHECK(drawn - healthy >= us(150));
  CHECK(drawn - healthy <= us(300));
  CHECK(drawn == iteration(", stragglers: [{fraction: 0.25, compute: 1.5, compute_max: 2.0, seed: 9}]"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a spine fails during a run: cross-leaf throughput drops to (S-1)/S once routing has noticed") {
  // Two leaves of 8 hosts, 4 spines, 100 Gb/s everywhere (2:1 oversubscribed): each
  // leaf-0 host sends 16 MiB to its leaf-1 twin and back, 800 Gb/s offered each way over
  // 400 Gb/s of spine links, so the spines bind. spine0 fails at 1 ms; routing goes around
  // it 100 us later. Delivered payload over [0.2, 1.0] ms and [1.2, 2.0] ms: the second is
  // 3/4 of the first.
  std::string config = R"(
topology:
  kind: leaf_spine
  leaves: 2
  spines: 4
  hosts_per_leaf: 8
  host_link: {bandwidth: 100Gbps, latency: 500ns}
  fabric_link: {bandwidth: 100Gbps, latency: 500ns}
network: {mtu: 4KiB, load_balancing: spray, retransmit_timeout: 200us}
faults: [{switch: spine0, down: true, at: 1ms, detection: 100us}]
messages:
)";
  for (int i = 0; i < 8; ++i) {
    config += "  - {src: h" + std::to_string(i) + ", dst: h" + std::to_string(8 + i) + ", bytes: 16MiB}\n";
    config += "  - {src: h" + std::to_string(8 + i) + ", dst: h" + std::to_string(i) + ", bytes: 16MiB}\n";
  }
  const auto delivered_by = [&](const char* stop) {
    ScenarioRun run(load_config_text(config + "stop: {time: " + stop + "}\n", "spine_fails"));
    run.run();
    std::uint64_t bytes = 0;
    for (HostId h = 0; h < run.network().host_count(); ++h) bytes += run.network().nic(h).counters().payload_bytes_received;
    return static_cast<double>(bytes);
  };
  const double before = delivered_by("1000us") - delivered_by("200us");
  const double after = delivered_by("2000us") - delivered_by("1200us");
  MESSAGE("spine0 down at 1 ms: ", before * 8 / 800e-6 / 1e9, " Gb/s over 0.2-1.0 ms, ", after * 8 / 800e-6 / 1e9,
          " Gb/s over 1.2-2.0 ms (ratio ", after / before, ")");
  CHECK(after / before == doctest::Approx(0.75).epsilon(0.03));
  // And the run ends, every message delivered (the packets lost in the 100 us are resent),
  // and every packet is accounted for: none is left in the pool (dropped ones included).
  ScenarioRun whole(load_config_text(config, "spine_fails_whole"));
  whole.run();
  CHECK(whole.complete());
  CHECK(whole.sim().packets().in_use() == 0);
  // Data packets sent = received (duplicates too) + dropped; the other drops are acks, at
  // most the acks sent.
  std::uint64_t sent = 0, received = 0, acks = 0, dropped = 0;
  for (HostId h = 0; h < whole.network().host_count(); ++h) {
    const NicCounters& c = whole.network().nic(h).counters();
    sent += c.data_packets_sent;
    received += c.data_packets_received + c.duplicate_packets_received;
    acks += c.acks_sent + c.nacks_sent;
  }
  for (const LinkDirection& d : whole.network().directions()) dropped += d.port->counters().total.drops;
  REQUIRE(sent >= received);
  CHECK(sent - received > 0);
  CHECK(dropped >= sent - received);
  CHECK(dropped - (sent - received) <= acks);
}

TEST_CASE("two jobs whose ring AllReduces share spine links each slow down to their max-min share") {
  // Two leaves of two hosts, one spine, 100 Gb/s InfiniBand (lossless, as training fabrics
  // are: on a lossy one without congestion control, drops and go-back-N make the share
  // unfair): job a on h0 (leaf0) and h2 (leaf1), job
  // b on h1 and h3. Each job's ring of two sends 32 MiB each way per step across
  // leaf0 - spine - leaf1; alone it has those links to itself, shared each gets half of
  // them (max-min: two flows per direction, nothing else binding), so each job takes
  // twice as long, less the latency terms that do not double.
  ScenarioRun run(load_config_text(R"(
topology:
  kind: leaf_spine
  leaves: 2
  spines: 1
  hosts_per_leaf: 2
  host_link: {bandwidth: 100Gbps, latency: 500ns, kind: infiniband}
  fabric_link: {bandwidth: 100Gbps, latency: 500ns, kind: infiniband}
network: {mtu: 4KiB}
jobs:
  - {name: a, placement: [h0, h2], workload: {kind: collective, op: all_reduce, algorithm: ring, bytes: 64MiB, check_data: false}}
  - {name: b, placement: [h1, h3], workload: {kind: collective, op: all_reduce, algorithm: ring, bytes: 64MiB, check_data: false}}
)",
                                   "two_jobs"));
  run.run();
  REQUIRE(run.complete());
  run.measure_jobs_alone();
  REQUIRE(run.jobs_alone().size() == 2);
  for (std::size_t j = 0; j < 2; ++j) {
    const double slowdown = static_cast<double>(run.job(j).rows()[0].time) / static_cast<double>(run.jobs_alone()[j][0]);
    MESSAGE("job ", j, ": ", to_us(run.job(j).rows()[0].time), " us shared, ", to_us(run.jobs_alone()[j][0]), " us alone: ", slowdown, "x");
    CHECK(slowdown == doctest::Approx(2.0).epsilon(0.03));
  }
  // Packed placement takes endpoints in order; a job asking for more than are free is refused.
  ScenarioRun packed(load_config_text(R"(
topology: {kind: leaf_spine, leaves: 2, spines: 1, hosts_per_leaf: 2, host_link: {bandwidth: 100Gbps}, fabric_link: {bandwidth: 100Gbps}}
jobs:
  - {name: a, ranks: 2, workload: {kind: collective, op: all_reduce, bytes: 1MiB}}
  - {name: b, ranks: 2, placement: spread, workload: {kind: collective, op: all_reduce, bytes: 1MiB}}
)",
                                      "packed"));
  CHECK(packed.job_hosts(0) == std::vector<HostId>{0, 1});
  CHECK(packed.job_hosts(1) == std::vector<HostId>{2, 3});
  CHECK_THROWS_AS(ScenarioRun(load_config_text(R"(
topology: {kind: leaf_spine, leaves: 2, spines: 1, hosts_per_leaf: 2, host_link: {bandwidth: 100Gbps}, fabric_link: {bandwidth: 100Gbps}}
jobs:
  - {name: a, ranks: 3, workload: {kind: collective, op: all_reduce, bytes: 1MiB}}
  - {name: b, ranks: 2, workload: {kind: collective, op: all_reduce, bytes: 1MiB}}
)",
                                                   "too_many")),
                  ConfigError);
}

TEST_CASE("faults from the start hold at flow fidelity too: a half-bandwidth cable paces the ring exactly") {
  // The ring of the first test at flow fidelity, headers 0 and an ack per 64 packets.
  // g0's sends cross g1's 50 Gb/s cable every step, which also carries 1/4096 of their
  // rate in acks: each drains in D = 1 MiB x 4097/4096 at 6.25 GB/s = 167,813,120 ps, and
  // g0 starts its next step once its send has drained (its receive, from g3, is faster).
  // So g0's six sends run back to back, and the collective ends once the last of them has
  // reached g1 and g1's last send, which waited for it, has reached g2: 6 D plus two path
  // delays d = 2 x 1 us + one 4 KiB packet at 100 Gb/s (the hop after the bottleneck).
  ScenarioRun run(load_config_text(star_yaml(4, "1us") + R"(
network: {mtu: 4KiB, header_bytes: 0, ack_bytes: 64, ack_interval: 64, fidelity: flow}
workload: {kind: collective, op: all_reduce, algorithm: ring, bytes: 4MiB, channels: 1}
faults: [{link: [g1, s], bandwidth: 50Gbps}]
)",
                                   "flow_ring_fault"));
  run.run();
  REQUIRE(run.complete());
  const Time drain = 167'813'120, delay = 2 * us(1) + 327'680;
  CHECK(static_cast<double>(run.collective()->rows()[0].time) == doctest::Approx(6.0 * drain + 2.0 * delay).epsilon(1e-5));
}

TEST_CASE("a timer backed off past the end of time ends the run instead of firing every picosecond") {
  // A 2,000,000 s timer; the leaf0-spine0 link dies at 1 ns and routing goes around it
  // only at 9,000,000 s. Every copy sent toward spine0 is lost: timeouts at 2.0e6 s, then
  // (the timer at its cap, kTimeMax / 4 = 2.3e6 s) 4.3e6, 6.6e6 and 8.9e6 s; the next
  // deadline, 11.2e6 s, lies past the clock's end (9.22e6 s). It must saturate: no timer
  // left, the run ends incomplete. (Before, it overflowed into the past and the timer
  // fired every picosecond.)
  ScenarioConfig c = load_config_text(R"(
topology:
  kind: leaf_spine
  leaves: 2
  spines: 2
  hosts_per_leaf: 4
  host_link: {bandwidth: 100Gbps, latency: 1us}
  fabric_link: {bandwidth: 100Gbps, latency: 1us}
network: {mtu: 4KiB, retransmit_timeout: 2000000s}
faults:
  - {link: [leaf0, spine0], down: true, at: 1ns, detection: 9000000s}
messages:
  - {src: h0, dst: h4, bytes: 4KiB, start: 2ns}
  - {src: h1, dst: h5, bytes: 4KiB, start: 2ns}
  - {src: h2, dst: h6, bytes: 4KiB, start: 2ns}
  - {src: h3, dst: h7, bytes: 4KiB, start: 2ns}
stop: {events: 1000000}
)",
                                      "timer_overflow");
  ScenarioRun run(std::move(c));
  run.run();
  CHECK(run.stop_reason() == StopReason::kQueueEmpty);  // not the event limit
  CHECK(run.events() < 10000);
  CHECK_FALSE(run.complete());  // messages or acks through spine0 wait with no timer left
}
