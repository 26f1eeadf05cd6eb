// NCCL's point-to-point path (AllToAll): its plan counted by hand from NCCL's source
// (src/enqueue.cc, src/graph/paths.cc, src/include/channel.h), the kernel's figures fitted
// from one GB300 tray and recovered from made-up points, and runs worked out by hand.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "app/config/config_loader.h"
#include "app/config/profile.h"
#include "app/scenario/scenario.h"
#include "app/studies/calibration.h"
#include "calibrate/p2p_fit.h"
#include "test_support.h"
#include "workloads/collectives/nccl_p2p.h"

using namespace fabricsim;

namespace {

// A GPU of 18 NVLinks in a communicator of 32 channels (a GB200/GB300 NVL domain: the
// ring search's 16 channels, duplicated): 32 p2p channels, 32 a peer.
NcclP2pFacts nvl(int ranks, std::int64_t total_bytes, int minor = 28) {
  NcclP2pFacts f;
  f.ranks = ranks;
  f.bytes_per_peer = total_bytes / ranks;
  f.comm_channels = 32;
  f.nvlinks_per_gpu = 18;
  f.nccl_minor = minor;
  return f;
}

}  // namespace

TEST_CASE("NCCL's p2p plan, counted by hand from NCCL 2.28's source") {
  SUBCASE("4 ranks, 1 MiB: LL (256 KiB a peer <= 32 x 16 KiB), 8 parts of 32 KiB, one work a channel") {
    // channels_min: 32 halved while x 4 ranks > 32: 8. Parts: min(8, 256 KiB / (64 KiB / 8)) = 8.
    const NcclP2pPlan p = nccl_p2p_plan(nvl(4, 1 << 20));
    CHECK(p.p2p_channels == 32);
    CHECK(p.channels_per_peer == 32);
    CHECK(p.protocol == NcclProtocol::kLL);
    CHECK(p.parts == 8);
    CHECK(p.part_bytes == 32 * 1024);
    CHECK(p.step_bytes == 64 * 1024);
    // Rounds 0-3 start at channels reverseBits(d, 5) = 0, 16, 8, 24: 8 each, none shared.
    CHECK(p.batches == 1);
    CHECK(p.most_sends_per_batch == 1);
  }
  SUBCASE("4 ranks, 4 GiB: Simple, parts doubled from 8 to 32 while over 32 steps (16 MiB)") {
    // 1 GiB a peer: 8 parts of 128 MiB -> 16 of 64 MiB -> 32 of 32 MiB (no more: 32 > 32/2).
    const NcclP2pPlan p = nccl_p2p_plan(nvl(4, 4ll << 30));
    CHECK(p.protocol == NcclProtocol::kSimple);
    CHECK(p.parts == 32);
    CHECK(p.part_bytes == 32ll << 20);
    CHECK(p.step_bytes == 512 * 1024);
    // Every channel holds all four rounds, one epoch: one batch of 3 sends and the copy.
    CHECK(p.batches == 1);
    CHECK(p.most_sends_per_batch == 3);
  }
  SUBCASE("64 ranks, 32 MiB: one part a peer; rounds d and d + 32 share a channel in two epochs") {
    const NcclP2pFacts f = nvl(64, 32 << 20);
    const NcclP2pPlan p = nccl_p2p_plan(f);
    CHECK(p.protocol == NcclProtocol::kLL);  // 512 KiB a peer, at the threshold
    CHECK(p.parts == 1);
    CHECK(p.batches == 2);
    CHECK(p.most_sends_per_batch == 1);
    const std::vector<int> batch = nccl_p2p_batches(f, 32, 1);
    CHECK(nccl_p2p_channel(f, 32, 1, 0) == 16);
    CHECK(nccl_p2p_channel(f, 32, 33, 0) == 16);
    CHECK(batch[1] == 0);
    CHECK(batch[33] == 1);
    CHECK(nccl_p2p_channel(f, 32, 3, 2) == 26);  // reverseBits(3, 5) = 24, part 2
  }
  SUBCASE("the release decides LL: 512 KiB a peer on 4 ranks") {
    // 2.28: against 32 channels x 16 KiB. 2.29: against its 8 parts (Simple's 64 KiB
    // smallest part) x 16 KiB = 128 KiB. Before 2.22: against 16 KiB.
    CHECK(nccl_p2p_plan(nvl(4, 2 << 20, 28)).protocol == NcclProtocol::kLL);
    CHECK(nccl_p2p_plan(nvl(4, 2 << 20, 29)).protocol == NcclProtocol::kSimple);
    CHECK(nccl_p2p_plan(nvl(4, 2 << 20, 21)).protocol == NcclProtocol::kSimple);
    CHECK(nccl_p2p_plan(nvl(4, 64 << 10, 21)).protocol == NcclProtocol::kLL);
  }
}

TEST_CASE("the p2p kernel's time by hand: launch + batches x (fixed cost + sends / rate + drain)") {
  NcclP2pKernel k{20.832, 5.291, 11.624, 7.325, 82.27, 3.8};
  // 4 ranks, 4 MiB: Simple, 8 parts of 128 KiB, one batch of one send:
  // 3.8 + 11.624 + 131072 / 20832 + 131072 / 82270 = 23.309 us (measured 23.03).
  CHECK(nccl_p2p_kernel_time_us(nccl_p2p_plan(nvl(4, 4 << 20)), k) == within(23.309, 1e-4));
  // 64 ranks, 32 MiB: LL, two batches of one 512 KiB part: 3.8 + 2 x (7.325 + 524288 / 5291) = 216.63 us (measured 236.0).
  CHECK(nccl_p2p_kernel_time_us(nccl_p2p_plan(nvl(64, 32 << 20)), k) == within(216.63, 1e-4));
}

TEST_CASE("the p2p kernel fit recovers made-up figures exactly, and the defaults are the GB300 tray's fit") {
  // Points made from known figures: the least squares of the relative error returns them.
  const double launch = 4, ll_rate = 5, ll_batch = 7, rate = 20, batch = 12, drain = 80;  // GB/s and us
  std::vector<P2pFitPoint> points;
  for (double bytes : {16e3, 64e3, 256e3}) points.push_back({true, 1, bytes, 0, launch + ll_batch + bytes / (ll_rate * 1e3)});
  for (double bytes : {128e3, 512e3, 4e6, 64e6}) {
    const double last = std::min(bytes, 524288.0);
    points.push_back({false, 2, bytes, last, launch + 2 * (batch + bytes / (rate * 1e3) + last / (drain * 1e3))});
  }
  const P2pFit fit = fit_p2p_kernel(points, launch);
  CHECK(fit.ll_channel_GBps == within(ll_rate, 1e-9));
  CHECK(fit.ll_batch_us == within(ll_batch, 1e-9));
  CHECK(fit.channel_GBps == within(rate, 1e-9));
  CHECK(fit.batch_us == within(batch, 1e-9));
  CHECK(fit.drain_GBps == within(drain, 1e-9));
  CHECK(fit.residuals.rms_relative < 1e-9);

  // The published tray (4 GB300s, NCCL 2.28.7): its fit is what every NVSwitch defaults to.
  // The same model fitted apart from fabricsim (the plans counted by hand, a Nelder-Mead
  // search on the relative error in a scratch script) gave 20.832 and 5.291 GB/s, 11.624 and
  // 7.325 us, 82.268 GB/s: the defaults.
  ImportRequest request;
  request.nccl_tests_logs = {FABRICSIM_SOURCE_DIR "/configs/validation/tables/gb300-4gpu-1node-alltoall.txt"};
  request.ranks = 4;
  request.op = CollectiveOp::kAllToAll;
  request.nccl_version = "2.28";
  const ImportResult imported = import_logs(request);
  REQUIRE(imported.profile.p2p);
  const P2pKernelSpec defaults;
  CHECK(imported.profile.p2p->channel_GBps == within(defaults.channel_GBps, 1e-3));
  CHECK(imported.profile.p2p->ll_channel_GBps == within(defaults.ll_channel_GBps, 1e-3));
  CHECK(imported.profile.p2p->drain_GBps == within(defaults.drain_GBps, 1e-3));
  CHECK(to_us(imported.profile.p2p->batch_latency) == within(to_us(defaults.batch_latency), 1e-3));
  CHECK(to_us(imported.profile.p2p->ll_batch_latency) == within(to_us(defaults.ll_batch_latency), 1e-3));
  CHECK(imported.collectives[0].fit.rms_relative < 0.06);
  // Written and read back: the profile's p2p entry.
  const std::string path = (std::filesystem::temp_directory_path() / "fabricsim_p2p_profile.yaml").string();
  { std::ofstream(path) << profile_yaml(imported.profile); }
  const LinkProfile again = load_profile(path);
  REQUIRE(again.p2p);
  CHECK(again.p2p->channel_GBps == within(imported.profile.p2p->channel_GBps, 1e-4));
  CHECK(again.p2p->launch_latency == imported.profile.p2p->launch_latency);
}

TEST_CASE("AllToAll on 8 H100s under NCCL's p2p model, by hand") {
  // dgx_h100: the ring search's 6 channels at 60 GB/s, duplicated to 12, and the
  // communicator's 24: 32 p2p channels, 32 a peer; channels_min 32 -> 4 (x 8 ranks = 32).
  // Each round's 4 parts sit on channels of their own: one batch, one send each. A part's
  // rate binds its packets on the wire, 64 header bytes to each 16 KiB; beyond the closed
  // form the last packet's two hops and its acknowledgement (the send's end) remain.
  const auto run = [](const std::string& bytes) {
    ScenarioRun r(load_config_text(
        "topology: {kind: nvswitch, preset: dgx_h100, latency: 100ns,\n"
        "  p2p: {bandwidth: 2GBps, ll_bandwidth: 0.5GBps, latency: 5us, ll_latency: 3us, drain_bandwidth: 50GBps, launch: 4us}}\n"
        "network: {mtu: 16KiB, nccl_version: \"2.28\"}\n"
        "workload: {kind: collective, op: all_to_all, algorithm: auto, bytes: " + bytes + "}\n",
        "p2p"));
    r.run();
    REQUIRE(r.collective()->rows().size() == 1);
    const CollectiveRow row = r.collective()->rows()[0];
    CHECK(row.data_check == "passed");
    return row;
  };
  const double wire = (16384.0 + 64) / 16384;
  // 8 MiB: 1 MiB a peer, Simple, 4 parts of 256 KiB at 2 GB/s each (56 GB/s a GPU, under
  // its 370.8 GB/s of NVLink): 4 + 5 + 262144 x wire / 2000 + 262144 / 50000 = 145.83 us.
  const CollectiveRow simple = run("8MiB");
  const double simple_us = 4 + 5 + 262144 * wire / 2000 + 262144.0 / 50000;
  MESSAGE("Simple: " << to_us(simple.time) << " us, closed form " << simple_us);
  CHECK(simple.protocol == "Simple");
  CHECK(to_us(simple.time) >= simple_us);
  CHECK(to_us(simple.time) <= simple_us + 2.5);
  // 2 MiB: 256 KiB a peer, LL, 4 parts of 64 KiB at 0.5 GB/s of payload (1 GB/s on the
  // wire): 4 + 3 + 65536 x wire / 500 = 138.58 us.
  const CollectiveRow ll = run("2MiB");
  const double ll_us = 4 + 3 + 65536 * wire / 500;
  MESSAGE("LL: " << to_us(ll.time) << " us, closed form " << ll_us);
  CHECK(ll.protocol == "LL");
  CHECK(to_us(ll.time) >= ll_us);
  CHECK(to_us(ll.time) <= ll_us + 2.5);
}
