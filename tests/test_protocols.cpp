// NCCL's protocols (workloads/nccl_protocol.h): NCCL's own latency and bandwidth figures
// by hand, and a ring under LL through the packet network against its closed form.
#include <doctest/doctest.h>

#include <string>
#include <tuple>

#include "app/config/config_error.h"
#include "app/config/config_loader.h"
#include "app/scenario.h"
#include "test_support.h"
#include "workloads/nccl_protocol.h"

using namespace fabricsim;

TEST_CASE("NCCL's ring latency model by hand: 2 nodes x 8 GPUs, AllReduce") {
  // 2(n-1) = 30 steps, 2(nodes-1) = 2 of them between nodes (NCCL's tuning table):
  //   LL:     3.6 + 28 x (0.47 x 1.8, multi-node) + 2 x 2.7  = 32.688 us
  //   LL128: 10.0 + 28 x 1.9 + 2 x 4.0                      = 71.2 us
  //   Simple: 8.4 + 28 x 3.4 + 2 x 9.6                      = 122.8 us
  CHECK(nccl_ring_latency_us(NcclProtocol::kLL, CollectiveOp::kAllReduce, 16, 2, true) == within(32.688, 1e-9));
  CHECK(nccl_ring_latency_us(NcclProtocol::kLL128, CollectiveOp::kAllReduce, 16, 2, true) == within(71.2, 1e-9));
  CHECK(nccl_ring_latency_us(NcclProtocol::kSimple, CollectiveOp::kAllReduce, 16, 2, true) == within(122.8, 1e-9));
  // One node of 8 over NVLink: 14 steps, none between nodes, no multi-node LL factor.
  CHECK(nccl_ring_latency_us(NcclProtocol::kLL, CollectiveOp::kAllReduce, 8, 1, true) == within(3.6 + 14 * 0.47, 1e-9));
  CHECK(nccl_ring_latency_us(NcclProtocol::kNone, CollectiveOp::kAllReduce, 8, 1, true) == 0);
  // Bandwidth: LL a quarter; LL128 92% but at most 16.7 GB/s per channel for AllReduce.
  CHECK(nccl_ring_busbw_GBps(NcclProtocol::kLL, 400, CollectiveOp::kAllReduce, 2, 8) == within(100, 1e-9));
  CHECK(nccl_ring_busbw_GBps(NcclProtocol::kLL128, 400, CollectiveOp::kAllReduce, 2, 8) == within(8 * 16.7, 1e-9));
  CHECK(nccl_ring_busbw_GBps(NcclProtocol::kLL128, 100, CollectiveOp::kAllReduce, 2, 8) == within(92, 1e-9));
  // LL: flags double the bytes and NCCL's model halves the rate again (its quarter).
  CHECK(protocol_wire_factor(NcclProtocol::kLL) == 4.0);
  CHECK(protocol_wire_factor(NcclProtocol::kLL128) == within(128.0 / 120.0, 1e-12));
}

TEST_CASE("ring AllReduce under LL on an ideal NVSwitch domain: NCCL's latency + four times the bytes") {
  // 8 GPUs, 450 GB/s each into one chip, 250 ns per hop, 64 KiB packets with 64-byte
  // headers. The ring's closed form, 2(n-1)/n * S' * wire / B + 2(n-1) * (packet / B + 2 L),
  // with S' = 4 S (LL: a flag per 8 bytes of data, and NCCL's model's quarter of Simple's
  // bandwidth), plus NCCL's LL latency for one node
  // over NVLink, 3.6 + 14 x 0.47 = 10.18 us, less what the links already charge per step
  // (two 250 ns hops, 14 x 0.5 = 7 us): 3.18 us.
  const double n = 8, S = 64.0 * 1024 * 1024, B = 450e9, L = 250e-9;
  const double wire = (65536.0 + 64) / 65536.0, step = (65536.0 + 64) / B + 2 * L;
  const double expected_us = 3.18 + (2 * (n - 1) / n * 4 * S * wire / B + 2 * (n - 1) * step) * 1e6;
  const std::string yaml = R"(
topology: {kind: nvswitch, gpus: 8, switches: 1, links_per_switch: 18, nvlink_bandwidth: 25GBps, latency: 250ns}
network: {mtu: 64KiB, header_bytes: 64}
workload: {kind: collective, op: all_reduce, algorithm: ring, protocol: ll, bytes: 64MiB}
)";
  ScenarioRun run(load_config_text(yaml, "ll"));
  run.run();
  const CollectiveRow& row = run.collective()->rows()[0];
  MESSAGE("ring LL AllReduce 64 MiB: " << to_us(row.time) << " us, closed form " << expected_us << " us");
  CHECK(row.protocol == "LL");
  CHECK(row.data_check == "passed");
  CHECK(to_us(row.time) == within(expected_us, 0.01));
}

TEST_CASE("protocol auto: NCCL's tree with LL for small sizes, the ring with Simple for large ones, on 2 x DGX H100") {
  const std::string yaml = two_dgx_h100_yaml(
      "{kind: collective, op: all_reduce, algorithm: auto, protocol: auto, channels: 8, bytes: SIZE, check_data: false}", ", nvls: false");
  // By NCCL's model (busbw 400 GB/s for Simple, 100 for LL, 8 x 16.7 for LL128; algbw is
  // busbw / (2 x 15/16)):
  // 4 KiB: the ring's LL 32.7 us + 0.04 us beats its LL128 71.2 and Simple 122.8; NCCL's
  // tree with LL does better still: 6.8 + 2 x (7 x 0.6 x 1.8 + 1 x 5.0) = 31.92 us, plus
  // 4096 B at half of min(min(450 x 0.92, 8 x 41.4) / 3.8, 22.5) GB/s x 0.7 (its correction
  // at 4 KiB) = 7.875 GB/s: 0.52 us, 32.44 in all.
  // 1 GiB: the ring's Simple 122.8 + 1073741824 / 213.3 GB/s (algbw) = 5156 us beats its
  // LL128's 71.2 + 15070 and LL's 32.7 + 20133, and the tree's Simple, 2 x (7 x 4 + 14) =
  // 84 us + 1073741824 / (331.2 / 2) GB/s = 6568 us.
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

TEST_CASE("NCCL's tree figures: latency, bus bandwidth and the medium-size correction, worked by hand") {
  // 4 nodes of 8 GPUs, NVLink: Simple 0 + 2 x (7 x 4.0 + log2(4) x 14) = 112 us; LL
  // 6.8 + 2 x (7 x 0.6 x 1.8 + 2 x 5.0) = 41.92 us; LL128 14 + 2 x (7 x 1.25 + 2 x 8.5) = 65.5.
  CHECK(nccl_tree_latency_us(NcclProtocol::kSimple, 32, 4, true) == within(112.0, 1e-12));
  CHECK(nccl_tree_latency_us(NcclProtocol::kLL, 32, 4, true) == within(41.92, 1e-12));
  CHECK(nccl_tree_latency_us(NcclProtocol::kLL128, 32, 4, true) == within(65.5, 1e-12));
  // Over PCIe inside the node, 3 nodes (log2 floors to 1): 2 x (3 x 6.0 + 14) = 64 us.
  CHECK(nccl_tree_latency_us(NcclProtocol::kSimple, 12, 3, false) == within(64.0, 1e-12));
  // Bus bandwidth from 400 GB/s on 4 nodes, 16 channels: min(368, 16 x 36.0 = 576) = 368;
  // LL min(368 / 3.8, 19.0) = 19.0; LL128 min(368 x 120/128 = 345, 16 x 29.0 = 464) = 345.
  CHECK(nccl_tree_busbw_GBps(NcclProtocol::kSimple, 400, 4, 16) == within(368.0, 1e-12));
  CHECK(nccl_tree_busbw_GBps(NcclProtocol::kLL, 400, 4, 16) == within(19.0, 1e-12));
  CHECK(nccl_tree_busbw_GBps(NcclProtocol::kLL128, 400, 4, 16) == within(345.0, 1e-12));
  // One channel on 2 nodes: the per-channel cap, 41.4 x 0.92 is not it: min(368, 41.4).
  CHECK(nccl_tree_busbw_GBps(NcclProtocol::kSimple, 400, 2, 1) == within(41.4, 1e-12));
  // Correction by log2(bytes / 64): 1 MiB -> 14: LL 0.5, LL128 0.6, Simple 0.5; 32 B -> 0:
  // Simple 0.9; 1 GiB -> 24, past the table: 1.
  CHECK(nccl_tree_correction(NcclProtocol::kLL, 1 << 20) == within(0.5, 1e-12));
  CHECK(nccl_tree_correction(NcclProtocol::kLL128, 1 << 20) == within(0.6, 1e-12));
  CHECK(nccl_tree_correction(NcclProtocol::kSimple, 1 << 20) == within(0.5, 1e-12));
  CHECK(nccl_tree_correction(NcclProtocol::kSimple, 32) == within(0.9, 1e-12));
  CHECK(nccl_tree_correction(NcclProtocol::kSimple, std::int64_t{1} << 30) == within(1.0, 1e-12));
}
