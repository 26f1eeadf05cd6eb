// NCCL's protocols (workloads/collectives/nccl_protocol.h): NCCL's own latency and bandwidth figures
// by hand, and a ring under LL through the packet network against its closed form.
#include <doctest/doctest.h>

#include <array>
#include <string>
#include <utility>
#include <tuple>

#include "app/config/config_error.h"
#include "app/config/config_loader.h"
#include "app/workload/tuner_facts.h"
#include "app/scenario/scenario.h"
#include "test_support.h"
#include "workloads/collectives/nccl_protocol.h"
#include "workloads/collectives/nccl_tuning.h"
#include "workloads/collectives/tuner.h"

using namespace fabricsim;

TEST_CASE("protocol wire bytes: LL's flag per 8 bytes, LL128's per 120") {
  CHECK(protocol_wire_factor(NcclProtocol::kLL) == 2.0);
  CHECK(protocol_wire_factor(NcclProtocol::kLL128) == within(128.0 / 120.0, 1e-12));
  CHECK(protocol_wire_factor(NcclProtocol::kSimple) == 1.0);
}

// NCCL's pipeline (docs/model.md): the ring and the tree move their data in NCCL's pieces,
// each channel's sends at NCCL's per-channel rate for the protocol (its thread block's
// copies), and each piece reaches its receiving step NCCL's per-step latency after its
// data, less what the links charge; the base latency is paid at the start. On an
// NVSwitch domain of GPUs with 18 x 25 GB/s NVLinks at 250 ns, NCCL's ring graph is 18
// channels of 25 GB/s (worked below, "NCCL's graph search, reduced"); NCCL 2.28's LL
// gives min(141 (Hopper, one node), 450 / 2) = 141 GB/s of bus bandwidth, 141 / 18 per
// channel; Simple 450, 25 per channel. A GPU to GPU step charges two 250 ns links.
namespace {
const char* kNvSwitchPair = "topology: {kind: nvswitch, gpus: GPUS, switches: 1, links_per_switch: 18, nvlink_bandwidth: 25GBps, latency: 250ns}\n"
                            "network: {mtu: 4KiB, header_bytes: 64}\n";
std::string nvswitch_yaml(int gpus, const std::string& workload) {
  std::string text = kNvSwitchPair;
  text.replace(text.find("GPUS"), 4, std::to_string(gpus));
  return text + "workload: " + workload + "\n";
}
// A GPU's 18 NVLinks are one 450 GB/s link into the switch (and one out of it): one
// packet of 4096 payload bytes and 64 of header crosses it in kPacketUs.
constexpr double kPacketUs = 4160.0 / 450e9 * 1e6;
}  // namespace

// calcCollChunking (src/enqueue.cc, NCCL 2.28): NVLS and NVLS-tree start from
// NCCL_NVLS_CHUNKSIZE, 128 KiB, and take smaller chunks below multiples of
// channels x heads x chunk. 16 channels x 8 heads = 128 concurrent chunks.
TEST_CASE("NCCL's NVLS and NVLS-tree chunks by hand") {
  constexpr std::int64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
  // NVLS, one node of 8: 64 x 128 x 128 KiB = 1 GiB; 8 x 128 x 64 KiB = 64 MiB;
  // 2 x 128 x 32 KiB = 8 MiB.
  CHECK(nccl_nvls_chunk_bytes(false, 8 * GiB, 16, 8, 1) == 128 * KiB);
  CHECK(nccl_nvls_chunk_bytes(false, 1 * GiB, 16, 8, 1) == 128 * KiB);
  CHECK(nccl_nvls_chunk_bytes(false, 1 * GiB - 1, 16, 8, 1) == 64 * KiB);
  CHECK(nccl_nvls_chunk_bytes(false, 64 * MiB, 16, 8, 1) == 64 * KiB);
  CHECK(nccl_nvls_chunk_bytes(false, 64 * MiB - 1, 16, 8, 1) == 32 * KiB);
  CHECK(nccl_nvls_chunk_bytes(false, 8 * MiB - 1, 16, 8, 1) == 16 * KiB);
  CHECK(nccl_nvls_chunk_bytes(false, 1, 16, 8, 1) == 16 * KiB);
  // Four GPUs: 64 concurrent, so 512 MiB is the first threshold.
  CHECK(nccl_nvls_chunk_bytes(false, 256 * MiB, 16, 4, 1) == 64 * KiB);
  CHECK(nccl_nvls_chunk_bytes(false, 512 * MiB, 16, 4, 1) == 128 * KiB);
  // NVLS-tree over 2 nodes: 4 x 128 x 128 KiB = 64 MiB; 1 x 128 x 64 KiB = 8 MiB.
  CHECK(nccl_nvls_chunk_bytes(true, 8 * GiB, 16, 8, 2) == 128 * KiB);
  CHECK(nccl_nvls_chunk_bytes(true, 64 * MiB, 16, 8, 2) == 128 * KiB);
  CHECK(nccl_nvls_chunk_bytes(true, 64 * MiB - 1, 16, 8, 2) == 64 * KiB);
  CHECK(nccl_nvls_chunk_bytes(true, 8 * MiB - 1, 16, 8, 2) == 32 * KiB);
  // From 4 nodes at most 64 KiB; 32 KiB under 128 x 64 KiB = 8 MiB.
  CHECK(nccl_nvls_chunk_bytes(true, 8 * GiB, 16, 8, 4) == 64 * KiB);
  CHECK(nccl_nvls_chunk_bytes(true, 8 * MiB, 16, 8, 4) == 64 * KiB);
  CHECK(nccl_nvls_chunk_bytes(true, 8 * MiB - 1, 16, 8, 4) == 32 * KiB);
}

TEST_CASE("NCCL's pipeline: one LL ring step on an ideal NVSwitch domain, by hand") {
  // Two GPUs, one channel, 64 KiB: each rank's segment, 32 KiB, is one LL piece (NCCL's LL
  // step: 8 lines x 512 threads x 16 B per step, half flags), 64 KiB on the wire: 16
  // packets of 4096 + 64 bytes. The channel makes them at 141 / 18 GB/s of data, twice
  // that on the wire: packet i is ready (i + 1) x 4160 B / (2 x 141 / 18 GB/s) after the
  // step starts; the last crosses the GPU's link and the switch's (one packet each at
  // 450 GB/s, 250 ns each) and the receiving kernel sees it NCCL's LL NVLink step latency,
  // 0.6 us, less the two links' 0.5 us, later. Two such steps (reduce-scatter, then
  // all-gather) after NCCL's base latency for the ring with LL, 6.6 us.
  const double paced_us = 4160.0 / (2 * 141.0 / 18 * 1e9) * 1e6;
  const double step_us = 16 * paced_us + 2 * kPacketUs + 2 * 0.25 + (0.6 - 0.5);
  const double expected_us = 6.6 + 2 * step_us;
  ScenarioRun run(load_config_text(
      nvswitch_yaml(2, "{kind: collective, op: all_reduce, algorithm: ring, protocol: ll, channels: 1, bytes: 64KiB}"), "ll"));
  run.run();
  const CollectiveRow& row = run.collective()->rows()[0];
  MESSAGE("ring LL AllReduce 64 KiB on 2 GPUs: " << to_us(row.time) << " us, by hand " << expected_us << " us");
  CHECK(row.protocol == "LL");
  CHECK(row.data_check == "passed");
  CHECK(to_us(row.time) == within(expected_us, 1e-4));
}

TEST_CASE("NCCL's pipeline: a chunked ring Broadcast fills and drains, by hand") {
  // Four GPUs, one channel, Simple, 2 MiB: four pieces of NCCL's Simple step (a 4 MiB
  // buffer in 8 steps: 512 KiB), each 128 packets made at the channel's 25 GB/s: T = 128
  // x 4160 B / 25 GB/s. A piece reaches the next GPU two links (its last packet's time and
  // 250 ns on each) after its last packet is made, and its step NCCL's Simple NVLink step latency, 3.4
  // us, less the links' 0.5 us, later; each GPU sends a piece once it has it and has
  // sent the one before. So the last GPU has the last piece after the pipeline's fill,
  // 3 hops of (T + 2 packets + 2 x 250 ns + 2.9 us), and its drain, 3 more pieces of T;
  // the base latency of NCCL's ring with Simple, 8.4 us, comes first.
  const double t_us = 128 * 4160.0 / 25e9 * 1e6;
  const double hop_us = t_us + 2 * kPacketUs + 2 * 0.25 + (3.4 - 0.5);
  const double expected_us = 8.4 + 3 * hop_us + 3 * t_us;
  ScenarioRun run(load_config_text(
      nvswitch_yaml(4, "{kind: collective, op: broadcast, algorithm: ring, protocol: simple, channels: 1, bytes: 2MiB}"), "bcast"));
  run.run();
  const CollectiveRow& row = run.collective()->rows()[0];
  MESSAGE("ring Simple Broadcast 2 MiB on 4 GPUs: " << to_us(row.time) << " us, by hand " << expected_us << " us");
  CHECK(row.data_check == "passed");
  CHECK(to_us(row.time) == within(expected_us, 1e-4));
}

TEST_CASE("protocol auto: NCCL's tree with LL for small sizes, the ring with Simple for large ones, on 2 x DGX H100") {
  const std::string yaml = two_dgx_h100_yaml(
      "{kind: collective, op: all_reduce, algorithm: auto, protocol: auto, channels: 8, bytes: SIZE, check_data: false}", ", nvls: false");
  // By NCCL 2.28's model (the ring and tree graphs: 8 channels of 48 GB/s, worked in the
  // test below):
  // 4 KiB: the ring's LL 40.0 us + 4096 B / 20.8 GB/s = 40.2 us; NCCL's tree with LL does
  // better: 25.2 us + 4096 B at 19.5 GB/s x 0.7 (its correction at 4 KiB): 25.5 us.
  // 1 GiB: the ring's Simple 131.6 x 1.4 + 1073741824 B / 204.8 GB/s = 5427 us beats the
  // tree's Simple, 92.4 + 1073741824 / 165.6 = 6576 us, and the ring's LL128, 75.2 +
  // 1073741824 / 156.6 = 6932 us.
  for (const auto& [size, algo, want] : {std::tuple<std::string, std::string, std::string>{"4KiB", "tree", "LL"}, {"1GiB", "ring", "Simple"}}) {
    std::string text = yaml;
    text.replace(text.find("SIZE"), 4, size);
    ScenarioConfig config = load_config_text(text, "auto");
    ScenarioRun run(std::move(config));
    CAPTURE(size);
    REQUIRE(run.collective());
    run.run();
    CHECK(run.collective()->rows()[0].algorithm == algo);
    CHECK(run.collective()->rows()[0].protocol == want);
    CHECK(run.collective()->rows()[0].time > 0);
  }
}

TEST_CASE("a protocol on an algorithm NCCL's model does not cost is refused with the key") {
  const std::string yaml = R"(
topology: {kind: nvswitch, gpus: 8, switches: 1, links_per_switch: 18, nvlink_bandwidth: 25GBps}
workload: {kind: collective, op: all_reduce, algorithm: halving_doubling, protocol: ll, bytes: 1MiB}
)";
  try {
    ScenarioRun run(load_config_text(yaml, "<test>"));
    FAIL("expected an error");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.find("workload.protocol") != std::string::npos);
    CHECK(what.find("halving_doubling takes none or auto") != std::string::npos);
  }
}

namespace {
// 2 x DGX H100 as NCCL's tuner sees it: 16 ranks on 2 nodes over NVLink, Hopper, an Intel
// host, the ring and tree graphs of 8 channels at 48 GB/s, NVLS's of 16 at 24 GB/s.
NcclSystem two_dgx_h100_system() {
  NcclSystem s;
  s.ranks = 16;
  s.nodes = 2;
  s.compute_capability = 90;
  const NcclGraph ring = nccl_ring_graph(90, 450, 50, 8, 2);
  s.graphs[static_cast<std::size_t>(NcclAlgo::kRing)] = ring;
  s.graphs[static_cast<std::size_t>(NcclAlgo::kTree)] = nccl_tree_graph(90, 450, 50, 8, 2);
  s.graphs[static_cast<std::size_t>(NcclAlgo::kNvlsTree)] = nccl_nvls_graph(90, 450, 50, 8, 2, 8, false);
  return s;
}
}  // namespace

TEST_CASE("NCCL's graph search, reduced: channels and per-channel speeds") {
  // 2 nodes of H100 (450 GB/s of NVLink, 8 x 50 GB/s NICs): a channel per NIC at the
  // fastest Hopper inter-node speed not above 50 GB/s: 48; 48 < 50 with 8 > 4 channels:
  // not duplicated.
  NcclGraph g = nccl_ring_graph(90, 450, 50, 8, 2);
  CHECK(g.channels == 8);
  CHECK(g.bw_intra == 48.0);
  // 2 nodes of A100 with 8 x 25 GB/s NICs: the pre-Hopper list's 24; below 25: not duplicated.
  g = nccl_ring_graph(80, 300, 25, 8, 2);
  CHECK(g.channels == 8);
  CHECK(g.bw_intra == 24.0);
  // One H100 node: 9 channels of 50 GB/s carry the most (450), then duplicated to 18 x 25.
  g = nccl_ring_graph(90, 450, 0, 0, 1);
  CHECK(g.channels == 18);
  CHECK(g.bw_intra == 25.0);
  // The 2-node tree: the ring's 8 channels, the intra speed raised within min(2 x 48,
  // 450 / 8 = 56.25): Hopper's 50. On A100 within min(48, 300 / 8 = 37.5): 30.
  g = nccl_tree_graph(90, 450, 50, 8, 2);
  CHECK(g.channels == 8);
  CHECK(g.bw_intra == 50.0);
  CHECK(g.bw_inter == 48.0);
  CHECK(nccl_tree_graph(80, 300, 25, 8, 2).bw_intra == 30.0);
  CHECK(nccl_tree_graph(90, 450, 50, 8, 4).bw_intra == 48.0);  // more nodes: as the ring
  // NVLS: 16 channels at the fastest intra speed within 450 / 16 = 28.1 GB/s (24), and
  // across 2 nodes within 8 x 50 / 16 = 25 GB/s (24).
  g = nccl_nvls_graph(90, 450, 50, 8, 2, 8, false);
  CHECK(g.channels == 16);
  CHECK(g.bw_intra == 24.0);
  CHECK(g.bw_inter == 24.0);
}

TEST_CASE("NCCL 2.28's cost model by hand: 2 x DGX H100, AllReduce") {
  const NcclCostModel m(*nccl_rules("2.28"), two_dgx_h100_system());
  const auto ar = CollectiveOp::kAllReduce;
  // Ring: 30 steps, 2 between nodes; inside, at least NCCL's 1 us net overhead (x3 for Simple).
  //   LL:     6.6 + 28 x max(0.6, 1) + 2 x 2.7        = 40.0 us; bus min(39 (Intel, 2 nodes), 384 / 2) = 39
  //   LL128: 14.0 + 28 x max(1.9, 1) + 2 x 4.0        = 75.2 us; bus min(384 x 0.92, 8 x 36.7) = 293.6
  //   Simple: 8.4 + 28 x max(3.4, 3) + 2 x 14         = 131.6 us; bus 384
  // Algorithm bandwidth = bus x 16 / 30.
  CHECK(m.cost(ar, NcclAlgo::kRing, NcclProtocol::kLL).latency_us == within(40.0, 1e-9));
  CHECK(m.cost(ar, NcclAlgo::kRing, NcclProtocol::kLL).algbw_GBps == within(39.0 * 16 / 30, 1e-9));
  CHECK(m.cost(ar, NcclAlgo::kRing, NcclProtocol::kLL128).latency_us == within(75.2, 1e-9));
  CHECK(m.cost(ar, NcclAlgo::kRing, NcclProtocol::kLL128).algbw_GBps == within(293.6 * 16 / 30, 1e-9));
  CHECK(m.cost(ar, NcclAlgo::kRing, NcclProtocol::kSimple).latency_us == within(131.6, 1e-9));
  // The ring's plateau: Simple's latency x 1.4 once each rank's share per channel is 64 B.
  CHECK(m.latency_us(ar, NcclAlgo::kRing, NcclProtocol::kSimple, 1 << 20) == within(131.6 * 1.4, 1e-9));
  CHECK(m.latency_us(ar, NcclAlgo::kRing, NcclProtocol::kSimple, 4096) == within(131.6, 1e-9));
  // Tree: 2 x ((8 - 1) x NVLink + log2(2) x network).
  //   LL 6.8 + 2 x (4.2 + 5.0) = 25.2; LL128 14 + 2 x (8.75 + 8.5) = 48.5; Simple 8.4 + 2 x (28 + 14) = 92.4
  //   bus min(8 x 50 x 0.92, 8 x 41.4) = 331.2 (the tree graph: 50 GB/s inside); LL min(331.2 / 3.8, 39) = 39; LL128 min(331.2 x 120/128, 293.6) = 293.6
  //   algorithm bandwidth half of it.
  CHECK(m.cost(ar, NcclAlgo::kTree, NcclProtocol::kLL).latency_us == within(25.2, 1e-9));
  CHECK(m.cost(ar, NcclAlgo::kTree, NcclProtocol::kLL128).latency_us == within(48.5, 1e-9));
  CHECK(m.cost(ar, NcclAlgo::kTree, NcclProtocol::kSimple).latency_us == within(92.4, 1e-9));
  CHECK(m.cost(ar, NcclAlgo::kTree, NcclProtocol::kSimple).algbw_GBps == within(165.6, 1e-9));
  CHECK(m.cost(ar, NcclAlgo::kTree, NcclProtocol::kLL).algbw_GBps == within(19.5, 1e-9));
  CHECK(m.cost(ar, NcclAlgo::kTree, NcclProtocol::kLL128).algbw_GBps == within(146.8, 1e-9));
  // NVLS-tree: 25 (NVLink) + 2 x log2(2) x 20.9 = 66.8 us; per channel min(24 x 0.85 x 15/16
  // x 2 = 38.25, 24 x 2, 57.7) = 38.25, x 16 channels x 16/30 = 326.4 GB/s.
  CHECK(m.cost(ar, NcclAlgo::kNvlsTree, NcclProtocol::kSimple).latency_us == within(66.8, 1e-9));
  CHECK(m.cost(ar, NcclAlgo::kNvlsTree, NcclProtocol::kSimple).algbw_GBps == within(326.4, 1e-9));
  CHECK(m.cost(ar, NcclAlgo::kNvlsTree, NcclProtocol::kLL).algbw_GBps == 0);  // Simple only
  // 1 MiB: the tree's LL128 (its correction 0.6 at log2(1 MiB / 64) = 14) wins:
  // 48.5 + 1048576 / (146.8 x 0.6 x 1000) = 60.40 us, against NVLS-tree's 66.8 + 3.21 and
  // the ring's LL128 75.2 + 6.70.
  CHECK(m.time_us(ar, NcclAlgo::kTree, NcclProtocol::kLL128, 1 << 20) == within(48.5 + 1048576.0 / (146.8 * 0.6 * 1000), 1e-6));
  CHECK(m.time_us(ar, NcclAlgo::kNvlsTree, NcclProtocol::kSimple, 1 << 20) == within(66.8 + 1048576.0 / 326400, 1e-6));
  CHECK(m.time_us(ar, NcclAlgo::kRing, NcclProtocol::kLL128, 1 << 20) ==
        within(75.2 + 1048576.0 / (293.6 * 16 / 30 * 1000), 1e-6));
}

TEST_CASE("NCCL's rules by release: the same system under 2.18, 2.21 and 2.27") {
  const auto ar = CollectiveOp::kAllReduce;
  // 2.21: 2 x nodes = 4 network steps in the ring, the tree's Simple at 28 us per hop.
  const NcclCostModel m21(*nccl_rules("2.21.5"), two_dgx_h100_system());
  CHECK(m21.rules().version == "2.21");
  CHECK(m21.cost(ar, NcclAlgo::kRing, NcclProtocol::kLL).latency_us == within(6.6 + 26 * 1.0 + 4 * 2.7, 1e-9));
  CHECK(m21.cost(ar, NcclAlgo::kTree, NcclProtocol::kSimple).latency_us == within(2 * (7 * 28.0 + 28.0), 1e-9));
  // NVLS-tree: 25 + 2 x 14 = 53 us; min(24, 24) x 16 x 5/6 = 320 GB/s.
  CHECK(m21.cost(ar, NcclAlgo::kNvlsTree, NcclProtocol::kSimple).latency_us == within(53.0, 1e-9));
  CHECK(m21.cost(ar, NcclAlgo::kNvlsTree, NcclProtocol::kSimple).algbw_GBps == within(320.0, 1e-9));
  // 2.18: NVLS-tree 23 + 2 x (2 - 1) x 19 = 61 us at 24 x 16 x 0.7 x 2 / 2 = 268.8 GB/s; LL
  // a quarter of the ring's bus bandwidth (then the same 39 GB/s cap).
  const NcclCostModel m18(*nccl_rules("2.18"), two_dgx_h100_system());
  CHECK(m18.cost(ar, NcclAlgo::kNvlsTree, NcclProtocol::kSimple).latency_us == within(61.0, 1e-9));
  CHECK(m18.cost(ar, NcclAlgo::kNvlsTree, NcclProtocol::kSimple).algbw_GBps == within(268.8, 1e-9));
  // 2.27: 2(nodes - 1) network steps, and no NVLS-tree cap or efficiency yet.
  const NcclCostModel m27(*nccl_rules("2.27.3-1"), two_dgx_h100_system());
  CHECK(m27.rules().version == "2.27.3");
  CHECK(m27.cost(ar, NcclAlgo::kRing, NcclProtocol::kLL).latency_us == within(40.0, 1e-9));
  CHECK(m27.cost(ar, NcclAlgo::kNvlsTree, NcclProtocol::kSimple).latency_us == within(25 + 2 * 14.0, 1e-9));
  // Not versions, or too old.
  CHECK_FALSE(nccl_rules("2.17"));
  CHECK_FALSE(nccl_rules("3.0"));
  CHECK_FALSE(nccl_rules("latest"));
  CHECK_FALSE(nccl_rules("2.28.x"));
  CHECK(nccl_rules("2.31.1")->version == "2.30");
}

namespace {
// A system over NVLink whose only graph is the ring.
NcclSystem ring_only_system(int ranks, int nodes, int compute_capability, const NcclGraph& ring) {
  NcclSystem s;
  s.ranks = ranks;
  s.nodes = nodes;
  s.compute_capability = compute_capability;
  s.nvlink = true;
  s.graphs[static_cast<std::size_t>(NcclAlgo::kRing)] = ring;
  return s;
}
}  // namespace

TEST_CASE("NCCL's rules by patch release: the ring's LL128 cap on Blackwell, 2.28.3 to 2.30") {
  // perChMaxRingLL128Bws' Blackwell row (N1 / N2 / N4) in src/graph/tuning.cc at each tag.
  const auto ll128_cap = [](const char* v) { return nccl_rules(v)->ring_ll128_per_channel[3]; };
  CHECK(ll128_cap("2.28.3-1") == std::array<double, 3>{73.4, 73.4, 73.4});
  CHECK(ll128_cap("2.28.7-1") == std::array<double, 3>{73.4, 34.6, 73.4});
  CHECK(ll128_cap("2.28") == std::array<double, 3>{73.4, 34.6, 73.4});
  CHECK(ll128_cap("2.29.2-1") == std::array<double, 3>{34.5, 34.6, 34.5});
  CHECK(ll128_cap("2.29.7-1") == std::array<double, 3>{40.0, 40.0, 40.0});
  CHECK(ll128_cap("2.30.4") == std::array<double, 3>{40.0, 40.0, 40.0});
  // NVLS-tree's network step and its cap beyond two nodes moved at 2.28.9 and 2.30.
  const int nvls_tree = static_cast<int>(NcclAlgo::kNvlsTree);
  CHECK(nccl_rules("2.28.7")->hw[2][nvls_tree][2] == 14.0);
  CHECK(nccl_rules("2.28.9")->hw[2][nvls_tree][2] == 20.9);
  CHECK(nccl_rules("2.28.7")->nvls_tree_per_channel[3][2] == 43.1);
  CHECK(nccl_rules("2.29")->nvls_tree_per_channel[3][2] == 43.8);
  CHECK(nccl_rules("2.30")->nvls_tree_per_channel[3][2] == 80.0);
  // A patch that changed a figure is named; a line alone is its last release.
  CHECK(nccl_rules("2.28.7-1")->version == "2.28.7");
  CHECK(nccl_rules("2.28")->version == "2.28");
  CHECK(nccl_rules("2.30.4")->version == "2.30");

  // One GB300 tray (4 GPUs, 18 NVLinks of 40.1 GB/s): the ring graph's 16 channels of 45.
  // Simple: 8.4 + 6 x 3.4 = 28.8 us at 16 x 45 x 4/6 = 480 GB/s. LL128: 14 + 6 x 1.9 = 25.4
  // us at min(720 x 0.92, 16 x cap) x 4/6: 2.28.7's 73.4 gives 441.6, 2.30's 40 gives 426.7.
  // At 16 MiB 2.28.7 runs LL128 (25.4 + 37.99 = 63.39 us against Simple's 63.75), 2.30 Simple.
  const NcclSystem tray = ring_only_system(4, 1, 103, nccl_ring_graph(103, 721.8, 0, 0, 1, NcclBlackwellLists::k2_27_6));
  const auto ar = CollectiveOp::kAllReduce;
  const std::int64_t bytes = 16 << 20;
  const NcclCostModel m287(*nccl_rules("2.28.7"), tray);
  CHECK(m287.time_us(ar, NcclAlgo::kRing, NcclProtocol::kSimple, bytes) == within(28.8 + bytes / 480000.0, 1e-6));
  CHECK(m287.time_us(ar, NcclAlgo::kRing, NcclProtocol::kLL128, bytes) == within(25.4 + bytes / 441600.0, 1e-6));
  const NcclCostModel m30(*nccl_rules("2.30"), tray);
  CHECK(m30.time_us(ar, NcclAlgo::kRing, NcclProtocol::kLL128, bytes) == within(25.4 + bytes / (640000.0 * 4 / 6), 1e-6));
}

TEST_CASE("NCCL turns LL128 on unasked only where its release does: Blackwell from 2.25 (10.0, 12.0), every GPU from 2.27") {
  // tuning.cc's switch on minCompCap: 70, 80, 90 through v2.24.3-1; 100 and 120 too at
  // v2.25.1-1 and v2.26.5-1; from v2.27.3-1 every compute capability from 7.0.
  CHECK(nccl_rules("2.24.3")->ll128_by_default(90));
  CHECK_FALSE(nccl_rules("2.24.3")->ll128_by_default(100));
  CHECK_FALSE(nccl_rules("2.21")->ll128_by_default(86));
  CHECK(nccl_rules("2.25.1")->ll128_by_default(100));
  CHECK_FALSE(nccl_rules("2.26.5")->ll128_by_default(103));
  CHECK(nccl_rules("2.27.3")->ll128_by_default(103));
  CHECK(nccl_rules("2.28")->ll128_by_default(86));
  CHECK_FALSE(nccl_rules("2.30")->ll128_by_default(60));
  // 2.23 and 2.24 have no Blackwell rows: its GPUs take Hopper's and Hopper's search.
  const NcclRules r24 = *nccl_rules("2.24.3-1");
  CHECK(r24.version == "2.23");
  CHECK(r24.ring_ll128_per_channel[3] == r24.ring_ll128_per_channel[2]);
  CHECK(r24.tree_per_channel[3] == std::array<double, 3>{38.7, 41.4, 36.0});
  CHECK(r24.blackwell_lists == NcclBlackwellLists::kNone);
  // One GB300 tray at 16 MiB, where 2.28.7's model prefers LL128 (above): 2.26 (LL128 off
  // on 10.3 unasked) runs Simple, and NCCL_PROTO=LL128 still runs LL128.
  TunerFacts f;
  f.ranks = f.gpus_per_node = 4;
  f.nodes = 1;
  f.nvlink_GBps = 18 * 40.1;
  f.compute_capability = 103;
  f.nccl_version = "2.28.7";
  CHECK(choose_algorithm(CollectiveOp::kAllReduce, 16 << 20, f, "ring", "auto").protocol == NcclProtocol::kLL128);
  f.nccl_version = "2.26.5";
  CHECK(choose_algorithm(CollectiveOp::kAllReduce, 16 << 20, f, "ring", "auto").protocol == NcclProtocol::kSimple);
  CHECK(choose_algorithm(CollectiveOp::kAllReduce, 16 << 20, f, "ring", "ll128").protocol == NcclProtocol::kLL128);
}

TEST_CASE("NCCL's Blackwell speed lists by release: the ring across nodes and NVLS-tree inside them") {
  // search.cc's sm100SpeedArrayInter tops at 47.9 GB/s (v2.27.3-1), 48 (v2.27.5-1), 96 then
  // 48 (v2.27.6-1 to v2.29.3-1), 96, 80, 48 (v2.29.7-1), 96, 86, 80, 48 (v2.30.x); before
  // 2.25 Blackwell takes Hopper's (48). Two nodes of 8 B200, NICs of 50 GB/s: a channel per
  // NIC at the fastest inter speed within 50.
  const auto ring = [](const char* v, double nic) {
    return nccl_ring_graph(100, 721.8, nic, 8, 2, nccl_rules(v)->blackwell_lists);
  };
  CHECK(ring("2.27.3", 50).bw_inter == 47.9);
  CHECK(ring("2.27.5", 50).bw_inter == 48.0);
  CHECK(ring("2.28", 50).bw_inter == 48.0);
  CHECK(ring("2.24", 50).bw_inter == 48.0);
  // NICs of 90 GB/s (within 721.8 / 8): 48 up to 2.29.3, not duplicated (below 50 with 8
  // channels); 80 at 2.29.7 and 86 at 2.30, each duplicated to 16 channels at half.
  CHECK(ring("2.29.2", 90).channels == 8);
  CHECK(ring("2.29.2", 90).bw_inter == 48.0);
  CHECK(ring("2.29.7", 90).channels == 16);
  CHECK(ring("2.29.7", 90).bw_inter == 40.0);
  CHECK(ring("2.30", 90).bw_inter == 43.0);
  // The intra list gains 45 at 2.29: NVLS-tree's 16 channels over 721.8 GB/s of NVLink
  // (45.1 each) go at 40 under 2.28, 45 under 2.29. 2.25's intra list ends at 19, 2.27's at
  // 18: a GPU with 18.5 GB/s of NVLink finds a channel only under the latter.
  CHECK(nccl_nvls_graph(100, 721.8, 50, 8, 2, 8, false, nccl_rules("2.28")->blackwell_lists).bw_intra == 40.0);
  CHECK(nccl_nvls_graph(100, 721.8, 50, 8, 2, 8, false, nccl_rules("2.29")->blackwell_lists).bw_intra == 45.0);
  CHECK(nccl_ring_graph(100, 18.5, 0, 0, 1, nccl_rules("2.25")->blackwell_lists).channels == 0);
  CHECK(nccl_ring_graph(100, 18.5, 0, 0, 1, nccl_rules("2.28")->blackwell_lists).bw_intra == 18.0);
}

TEST_CASE("NCCL 2.29's size correction of NVLS-tree on Blackwell with x86 hosts") {
  // 2 nodes of 8 B200 (721.8 GB/s of NVLink, 8 NICs of 50 GB/s): NVLS-tree's 16 channels,
  // min(40 x 0.74 x 15/16 x 2, 24 x 2, 96) = 48 GB/s each, 768 of bus bandwidth, algbw
  // 768 x 16/30 = 409.6; latency 25 + 2 x 20.9 = 66.8 us. 2.29 multiplies the bandwidth by
  // the tree's factor for log2(bytes / 64) on x86 hosts (Simple, 1 MiB: 14, 0.5; 512 MiB:
  // 23, the 24th entry, 0.9; 1 GiB: past the table, 1); Grace (Arm) hosts and 2.28 keep it.
  NcclSystem s;
  s.ranks = 16;
  s.nodes = 2;
  s.compute_capability = 100;
  s.graphs[static_cast<std::size_t>(NcclAlgo::kNvlsTree)] = nccl_nvls_graph(100, 721.8, 50, 8, 2, 8, false, NcclBlackwellLists::k2_27_6);
  const auto ar = CollectiveOp::kAllReduce;
  const auto time = [&](const char* version, NcclCpu cpu, std::int64_t bytes) {
    s.cpu = cpu;
    return NcclCostModel(*nccl_rules(version), s).time_us(ar, NcclAlgo::kNvlsTree, NcclProtocol::kSimple, bytes);
  };
  const std::int64_t mib = 1 << 20;
  CHECK(time("2.29", NcclCpu::kIntel, mib) == within(66.8 + mib / (409600.0 * 0.5), 1e-6));
  CHECK(time("2.29", NcclCpu::kAmd, mib) == within(66.8 + mib / (409600.0 * 0.5), 1e-6));
  CHECK(time("2.29", NcclCpu::kArm, mib) == within(66.8 + mib / 409600.0, 1e-6));
  CHECK(time("2.28", NcclCpu::kIntel, mib) == within(66.8 + mib / 409600.0, 1e-6));
  CHECK(time("2.29", NcclCpu::kIntel, 512 * mib) == within(66.8 + 512 * mib / (409600.0 * 0.9), 1e-6));
  CHECK(time("2.29", NcclCpu::kIntel, 1024 * mib) == within(66.8 + 1024 * mib / 409600.0, 1e-6));
}


TEST_CASE("NCCL's rules by release: 2.19's ring LL at a quarter, and LL128 with one GPU per node through 2.22") {
  // One DGX A100 node (NVLink 300 GB/s a GPU): NCCL's ring graph carries all of it.
  const NcclSystem one = ring_only_system(8, 1, 80, nccl_ring_graph(80, 300, 0, 0, 1));
  const NcclGraph& g = one.graphs[static_cast<std::size_t>(NcclAlgo::kRing)];
  CHECK(g.channels * g.bw_intra == within(300.0, 1e-9));
  const auto ar = CollectiveOp::kAllReduce;
  const auto ag = CollectiveOp::kAllGather;
  // tuning.cc at v2.19.3-1: LL = min(llMaxBw, busBw x 1/4), a third for one-node gathers;
  // Ampere's one-node cap 87.7. AllReduce: min(87.7, 75) = 75, algbw 75 x 8 / 14;
  // AllGather: min(87.7, 100) = 87.7, algbw x 8 / 7. At v2.21.5-1, half: 87.7 both.
  const NcclCostModel m19(*nccl_rules("2.19.3-1"), one);
  CHECK(m19.rules().version == "2.19");
  CHECK(m19.cost(ar, NcclAlgo::kRing, NcclProtocol::kLL).algbw_GBps == within(75.0 * 8 / 14, 1e-9));
  CHECK(m19.cost(ag, NcclAlgo::kRing, NcclProtocol::kLL).algbw_GBps == within(87.7 * 8 / 7, 1e-9));
  CHECK(nccl_rules("2.20.5")->version == "2.19");
  const NcclCostModel m21(*nccl_rules("2.21.5"), one);
  CHECK(m21.cost(ar, NcclAlgo::kRing, NcclProtocol::kLL).algbw_GBps == within(87.7 * 8 / 14, 1e-9));
  // 2.19's NVLS step inside a node is 23 us (2.21: 25); Hopper's LL caps are Ampere's.
  CHECK(nccl_rules("2.19")->hw[0][static_cast<int>(NcclAlgo::kNvls)][2] == 23.0);
  CHECK(nccl_rules("2.19")->ll_max_bw[2][0] == 87.7);
  CHECK(nccl_rules("2.21")->ll_max_bw[2][0] == 141.0);

  // Two nodes of one H100 each (one 50 GB/s NIC): the ring's LL128 at min(busBw x 0.7,
  // channels x 36.7) through 2.22 (ppn < 2), x 0.92 from 2.23.
  const NcclSystem pair = ring_only_system(2, 2, 90, nccl_ring_graph(90, 450, 50, 1, 2));
  const NcclGraph& r = pair.graphs[static_cast<std::size_t>(NcclAlgo::kRing)];
  const double bus = r.channels * r.bw_intra;
  const double cap = r.channels * 36.7;
  // 2 ranks: nsteps = 2, algbw = bus x 2 / 2.
  CHECK(NcclCostModel(*nccl_rules("2.22.3"), pair).cost(ar, NcclAlgo::kRing, NcclProtocol::kLL128).algbw_GBps ==
        within(std::min(bus * 0.7, cap), 1e-9));
  CHECK(NcclCostModel(*nccl_rules("2.23.4"), pair).cost(ar, NcclAlgo::kRing, NcclProtocol::kLL128).algbw_GBps ==
        within(std::min(bus * 0.92, cap), 1e-9));
  CHECK(bus * 0.7 < cap);  // the share, not the cap, decides here
}

TEST_CASE("NCCL 2.29.2's printed tables for 2, 4 and 6 H100s of one node: the ring's and NVLS's entries, and its choice") {
  // NCCL_DEBUG=INFO of all_reduce_perf -g 2/4/6 on one HGX H100 (NCCL 2.29.2, whose rules
  // are 2.28's line), as published with its output (GitHub waynehacking8/nccl-collectives-bench,
  // results/scaling_attributed/g{2,4,6}_auto.log): latency (us) / algorithm bandwidth (GB/s)
  // per protocol, LL, LL128, Simple, then NVLS Simple. The system as the app builds it:
  // each GPU's 18 NVLinks at NCCL's 20.6 GB/s (370.8), NVSwitch reduction.
  struct Printed {
    int gpus;
    std::array<std::pair<double, double>, 3> broadcast, all_gather, all_reduce, tree_all_reduce;
    std::pair<double, double> nvls_all_gather, nvls_all_reduce;
    const char* choice_at_1gib;  // the log's "AllReduce: 1073741824 Bytes -> Algo ..."
  };
  const Printed printed[] = {
      {2, {{{7.2, 141.0}, {15.9, 331.2}, {11.8, 360.0}}}, {{{7.2, 282.0}, {15.9, 662.4}, {11.8, 720.0}}},
       {{{7.8, 141.0}, {17.8, 331.2}, {15.2, 360.0}}}, {{{8.0, 61.1}, {16.5, 180.6}, {16.4, 232.2}}}, {25.0, 25.5}, {25.0, 102.0},
       "ring"},
      {4, {{{7.2, 141.0}, {15.9, 331.2}, {11.8, 360.0}}}, {{{8.4, 188.0}, {19.7, 441.6}, {18.6, 480.0}}},
       {{{10.2, 94.0}, {25.4, 220.8}, {28.8, 240.0}}}, {{{10.4, 43.6}, {21.5, 128.8}, {32.4, 165.6}}}, {25.0, 114.8}, {25.0, 160.0},
       "ring"},
      {6, {{{7.2, 141.0}, {15.9, 331.2}, {11.8, 360.0}}}, {{{9.6, 169.2}, {23.5, 397.4}, {25.4, 432.0}}},
       {{{12.6, 84.6}, {33.0, 198.7}, {42.4, 216.0}}}, {{{12.8, 43.6}, {26.5, 128.8}, {48.4, 165.6}}}, {25.0, 177.1}, {25.0, 216.0},
       "nvls"},
  };
  const NcclProtocol protocols[] = {NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple};
  for (const Printed& t : printed) {
    CAPTURE(t.gpus);
    TunerFacts f;
    f.ranks = f.gpus_per_node = t.gpus;
    f.nodes = 1;
    f.nvlink_GBps = 18 * 20.6;
    f.nvls_GBps = 480;
    f.compute_capability = 90;
    f.nccl_version = "2.29.2";
    const NcclCostModel m(*nccl_rules(f.nccl_version), nccl_system(f));
    const auto check = [&](CollectiveOp op, NcclAlgo a, NcclProtocol p, std::pair<double, double> want) {
      CAPTURE(static_cast<int>(op));
      CAPTURE(static_cast<int>(p));
      const NcclCost c = m.cost(op, a, p);
      CHECK(c.latency_us == within(want.first, 0.05));  // printed to 0.1
      CHECK(c.algbw_GBps == within(want.second, 0.05));
    };
    for (int i = 0; i < 3; ++i) {
      check(CollectiveOp::kBroadcast, NcclAlgo::kRing, protocols[i], t.broadcast[static_cast<std::size_t>(i)]);
      check(CollectiveOp::kReduce, NcclAlgo::kRing, protocols[i], t.broadcast[static_cast<std::size_t>(i)]);
      check(CollectiveOp::kAllGather, NcclAlgo::kRing, protocols[i], t.all_gather[static_cast<std::size_t>(i)]);
      check(CollectiveOp::kReduceScatter, NcclAlgo::kRing, protocols[i], t.all_gather[static_cast<std::size_t>(i)]);
      check(CollectiveOp::kAllReduce, NcclAlgo::kRing, protocols[i], t.all_reduce[static_cast<std::size_t>(i)]);
      // The tree inside the node (a chain): 12 channels, at 60 GB/s on 2 GPUs (held at the
      // cap, 12 x 38.7 = 464.4, after x 0.92), 30 on 4 and 6 (12 x 30 x 0.92 = 331.2); LL
      // divides by 3.8, LL128 takes 7/9; half of it as algorithm bandwidth. Latency: the
      // tree's base (6.8, 14.0, 8.4) and 2 x (gpus - 1) NVLink steps (0.6, 1.25, 4.0).
      check(CollectiveOp::kAllReduce, NcclAlgo::kTree, protocols[i], t.tree_all_reduce[static_cast<std::size_t>(i)]);
    }
    check(CollectiveOp::kAllGather, NcclAlgo::kNvls, NcclProtocol::kSimple, t.nvls_all_gather);
    check(CollectiveOp::kAllReduce, NcclAlgo::kNvls, NcclProtocol::kSimple, t.nvls_all_reduce);
    const TunerChoice choice = choose_algorithm(CollectiveOp::kAllReduce, INT64_C(1) << 30, f, "auto", "auto");
    CHECK(choice.algorithm == t.choice_at_1gib);
    CHECK(choice.protocol == NcclProtocol::kSimple);
    // NVLS's kernels run NCCL_NVLS_NCHANNELS (16, the log's "16 nvls channels"), not its
    // graph's one per GPU.
    if (choice.algorithm == "nvls") CHECK(choice.nccl_channels == 16);
  }
  // How the NVLS entries come about (search.cc, tuning.cc): a channel per GPU, each at the
  // fastest Hopper speed s with (gpus + 1) x s <= 370.8: 60, 60, 50; the inter speed raised
  // to 60; 6 GPUs: 6 x min(50 x 0.85 x 5/6 x 2, 60) x 6/10 = 216, AllGather 6 x 50 x 0.85
  // x (5/6)^2 = 177.1. 2.18's list has no 50 and no raise: 6 GPUs at 40.
  const NcclGraph six = nccl_nvls_graph(90, 370.8, 0, 0, 1, 6, false);
  CHECK(six.channels == 6);
  CHECK(six.bw_intra == 50.0);
  CHECK(six.bw_inter == 60.0);
  CHECK(six.run_channels == 16);
  CHECK(nccl_nvls_graph(90, 370.8, 0, 0, 1, 6, true).bw_intra == 40.0);
  CHECK(nccl_nvls_graph(90, 370.8, 0, 0, 1, 8, false).bw_intra == 40.0);
}

TEST_CASE("Blackwell's graph search uses its own speed lists and NVLS channel counts from 2.27's line on") {
  // NCCL 2.27.7 and 2.28.9's search.cc: sm100SpeedArrayIntra {90, 80, 70, 60, 50, 40, ...},
  // sm100SpeedArrayInter {96, 48, 45.1, ...}; nvls.cc: NVLS_NCHANNELS_SM100_NVL 24 in one
  // NVLink domain, NVLS_NCHANNELS_SM100 32 across nodes. A B200's 18 NVLinks carry 721.8 GB/s.
  // One node's ring: 8 channels at 90 carry 720 (9 at 80 and 12 at 60 no more), duplicated
  // to 16 at 45; under Hopper's list 12 at 60, duplicated to 24 at 30.
  NcclGraph ring = nccl_ring_graph(100, 721.8, 0, 0, 1, NcclBlackwellLists::k2_27_6);
  CHECK(ring.channels == 16);
  CHECK(ring.bw_intra == 45.0);
  ring = nccl_ring_graph(100, 721.8, 0, 0, 1, NcclBlackwellLists::kNone);
  CHECK(ring.channels == 24);
  CHECK(ring.bw_intra == 30.0);
  // NVLS on 8 GPUs: a channel per GPU at the fastest s with 9 x s <= 721.8 (80, Hopper's
  // list: 60), the inter speed raised to the list's top (90; Hopper's: 60), 24 kernel channels.
  const NcclGraph nvls = nccl_nvls_graph(100, 721.8, 0, 0, 1, 8, false, NcclBlackwellLists::k2_27_6);
  CHECK(nvls.channels == 8);
  CHECK(nvls.bw_intra == 80.0);
  CHECK(nvls.bw_inter == 90.0);
  CHECK(nvls.run_channels == 24);
  const NcclGraph hopper_lists = nccl_nvls_graph(100, 721.8, 0, 0, 1, 8, false, NcclBlackwellLists::kNone);
  CHECK(hopper_lists.bw_intra == 60.0);
  CHECK(hopper_lists.run_channels == 16);
  // Across 2 nodes of 8 NICs at 50 GB/s: NVLS-tree's 16 channels, intra 721.8 / 16 = 45.1 ->
  // 40, inter 8 x 50 / 16 = 25 -> 24 (both lists alike), kernels on 32 channels.
  const NcclGraph tree = nccl_nvls_graph(100, 721.8, 50, 8, 2, 8, false, NcclBlackwellLists::k2_27_6);
  CHECK(tree.channels == 16);
  CHECK(tree.bw_intra == 40.0);
  CHECK(tree.bw_inter == 24.0);
  CHECK(tree.run_channels == 32);
  // The rules say which search a release ran: Hopper's lists for Blackwell through 2.22.
  CHECK(nccl_rules("2.28")->blackwell_lists == NcclBlackwellLists::k2_27_6);
  CHECK(nccl_rules("2.27")->blackwell_lists == NcclBlackwellLists::k2_27_6);
  CHECK(nccl_rules("2.21")->blackwell_lists == NcclBlackwellLists::kNone);
  // Hopper keeps its own lists whatever the release.
  CHECK(nccl_ring_graph(90, 370.8, 0, 0, 1, NcclBlackwellLists::k2_30).bw_intra == nccl_ring_graph(90, 370.8, 0, 0, 1).bw_intra);
  // 2.25 and 2.26 (nvls.cc: NVLS_NCHANNELS_SM100 32, no NVL figure yet) run 32 in one domain too.
  const NcclRules r25 = *nccl_rules("2.25.1-1");
  CHECK(r25.version == "2.25");
  CHECK(r25.nvls_blackwell_domain_channels == 32);
  CHECK(nccl_rules("2.26.5")->version == "2.25");
  CHECK(nccl_nvls_run_channels(100, 1, r25.blackwell_lists, r25.nvls_blackwell_domain_channels) == 32);
  CHECK(nccl_nvls_run_channels(100, 1, NcclBlackwellLists::k2_27_6) == 24);
  CHECK(nccl_nvls_run_channels(100, 2, NcclBlackwellLists::k2_27_6) == 32);
  CHECK(nccl_nvls_run_channels(90, 1, NcclBlackwellLists::k2_27_6, 32) == 16);
}

TEST_CASE("a collective row carries NCCL's own prediction, and unset channels are NCCL's graph's") {
  // 2 x DGX H100, the ring forced, 1 MiB: NCCL 2.28 picks LL128 (75.2 us + 1 MiB at
  // 293.6 x 16/30 GB/s = 81.90 us; LL 40.0 + 50.4, Simple 184.2 + 5.1), and runs it on its
  // ring graph's 8 channels, each standing for two of the 16 it runs: the same run as
  // `channels: 8` (NCCL's own 8) but for its proxy's launches, two per send (docs/model.md),
  // which the latency between steps hides here.
  const auto run_ring = [](const std::string& channels) {
    ScenarioRun run(load_config_text(two_dgx_h100_yaml("{kind: collective, op: all_reduce, algorithm: ring" + channels +
                                                       ", bytes: 1MiB, check_data: false}"),
                                     "<test>"));
    run.run();
    REQUIRE(run.collective()->rows().size() == 1);
    return run.collective()->rows()[0];
  };
  const CollectiveRow unset = run_ring("");
  CHECK(unset.protocol == "LL128");
  CHECK(unset.nccl_model_us == within(75.2 + 1048576.0 / (293.6 * 16 / 30 * 1000), 1e-6));
  const CollectiveRow eight = run_ring(", channels: 8");
  CHECK(to_us(unset.time) == within(to_us(eight.time), 0.005));
  CHECK(run_ring(", channels: 1").time > eight.time);
  // The ideal network: no NCCL prediction.
  const CollectiveRow ideal = run_ring(", protocol: none");
  CHECK(ideal.protocol == "-");
  CHECK(ideal.nccl_model_us < 0);
}

TEST_CASE("a protocol's network bytes: its flags, or NCCL's share of Simple's bandwidth where smaller") {
  // 2 x DGX H100, the ring (8 channels of 45 GB/s): NCCL 2.28 gives LL128 min(360 x 0.92,
  // 8 x 36.7) = 293.6 of Simple's 360 GB/s, less than its flags' 120/128: the run moves
  // 360 / 293.6 bytes per byte; LL gets 39 of 360 (the 2-node cap), so 360 / 39.
  const ScenarioConfig config = load_config_text(two_dgx_h100_yaml("", ", nvls: false"), "<test>");
  const TunerFacts f = tuner_facts(config.topology, 16);
  const TunerChoice ll128 = choose_algorithm(CollectiveOp::kAllReduce, 16 << 20, f, "ring", "ll128");
  CHECK(ll128.protocol == NcclProtocol::kLL128);
  CHECK(ll128.wire_factor == within(360.0 / 293.6, 1e-9));
  const TunerChoice ll = choose_algorithm(CollectiveOp::kAllReduce, 16 << 20, f, "ring", "ll");
  CHECK(ll.wire_factor == within(360.0 / 39.0, 1e-9));
  CHECK(choose_algorithm(CollectiveOp::kAllReduce, 16 << 20, f, "ring", "simple").wire_factor == 1.0);
}

TEST_CASE("dual-port NICs: NCCL sees each port as a NIC, so 2 x DGX A100 over 16 x 100G run the tree at 1 GiB") {
  // OCI's BM.GPU4.8: 8 A100s (12 NVLinks of 20.0 GB/s of data each: 240 GB/s) and 16
  // RDMA ports of 100 Gb/s (12.5 GB/s), two per GPU. Written as 8 NICs of 200 Gb/s with
  // nic_ports: 2, NCCL's graph has a ring channel per port: 16 at the fastest pre-Hopper
  // inter speed within min(12.5, 240 / 16 = 15): 12; below 25, not duplicated. The tree's
  // intra speed is raised within min(2 x 12, 15): 15.
  const std::string yaml =
      "topology:\n"
      "  kind: cluster\n  nodes: 2\n  node: {preset: dgx_a100}\n  nics_per_node: 8\n  nic_ports: PORTS\n"
      "  pcie: {bandwidth: 32GBps, latency: 500ns}\n"
      "  nic: {bandwidth: 200Gbps, latency: 500ns, kind: ethernet}\n"
      "  fabric: {kind: rail_optimized, spines: 2, fabric_link: {bandwidth: 200Gbps, latency: 500ns}}\n"
      "network: {mtu: 4KiB}\n"
      "workload: {kind: collective, op: all_reduce, algorithm: auto, bytes: 1GiB}\n";
  auto facts = [&](const char* ports) {
    std::string text = yaml;
    text.replace(text.find("PORTS"), 5, ports);
    return tuner_facts(load_config_text(text, "<test>").topology, 16);
  };
  const TunerFacts dual = facts("2");
  CHECK(dual.nics_per_node == 16);
  CHECK(dual.nic_GBps == within(12.5, 1e-12));
  CHECK(dual.node_nic_GBps == within(200.0, 1e-12));  // the node's NICs are what they were
  NcclGraph g = nccl_ring_graph(80, 240, 12.5, 16, 2);
  CHECK(g.channels == 16);
  CHECK(g.bw_intra == 12.0);
  CHECK(nccl_tree_graph(80, 240, 12.5, 16, 2).bw_intra == 15.0);
  // NCCL 2.28's Simple bandwidths (AllReduce): the ring 16 x 12 = 192, algorithm 192 x
  // 16 / 30 = 102.4 GB/s; the tree min(16 x 15 x 0.92, 16 x 23.6 (Ampere's per-channel
  // cap, 2 nodes)) = 220.8, half of it per byte: 110.4 GB/s. So the tree wins at 1 GiB.
  const TunerChoice c = choose_algorithm(CollectiveOp::kAllReduce, std::int64_t{1} << 30, dual, "auto", "auto");
  CHECK(c.algorithm == "tree");
  CHECK(c.protocol == NcclProtocol::kSimple);
  // One port per NIC (8 x 25 GB/s): 8 ring channels of 24 and tree channels of 30 (within
  // min(48, 240 / 8)), whose bus bandwidth the cap holds to 8 x 23.6 = 188.8, 94.4 GB/s
  // per byte against the ring's 8 x 24 x 16 / 30 = 102.4: the ring.
  const TunerFacts single = facts("1");
  CHECK(single.nics_per_node == 8);
  CHECK(nccl_tree_graph(80, 240, 25, 8, 2).bw_intra == 30.0);
  CHECK(choose_algorithm(CollectiveOp::kAllReduce, std::int64_t{1} << 30, single, "auto", "auto").algorithm == "ring");
}
