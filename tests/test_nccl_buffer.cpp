// NCCL_BUFFSIZE (`network.nccl_buffsize`): Simple's buffer, whose eighth is a step of the
// ring's and the tree's pieces and caps NCCL's p2p chunk (src/init.cc computeBuffSizes,
// calcCollChunking in src/enqueue.cc); counts and times worked by hand.
#include <doctest/doctest.h>

#include <string>

#include "app/config/config_loader.h"
#include "app/scenario/scenario.h"
#include "app/workload/tuner_facts.h"
#include "test_support.h"
#include "workloads/collectives/nccl_p2p.h"
#include "workloads/collectives/nccl_protocol.h"
#include "workloads/collectives/nccl_tuning.h"
#include "workloads/collectives/tuner.h"

using namespace fabricsim;

namespace {
constexpr std::int64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

NcclPipelineFacts ring(CollectiveOp op, std::int64_t bytes, int ranks, int channels, std::int64_t buffer) {
  NcclPipelineFacts f;
  f.op = op;
  f.bytes = bytes;
  f.ranks = ranks;
  f.channels = channels;
  f.simple_buffer_bytes = buffer;
  return f;
}
}  // namespace

TEST_CASE("NCCL's Simple buffer: 4 MiB, 1 MiB on Arm hosts in 2.18 only, NCCL_BUFFSIZE where set") {
  const NcclRules r218 = *nccl_rules("2.18.3");
  const NcclRules r219 = *nccl_rules("2.19.3");
  const NcclRules r228 = *nccl_rules("2.28.7");
  CHECK(nccl_simple_buffer_bytes(r228, NcclCpu::kIntel, 0) == 4 * MiB);
  CHECK(nccl_simple_buffer_bytes(r228, NcclCpu::kArm, 0) == 4 * MiB);
  CHECK(nccl_simple_buffer_bytes(r218, NcclCpu::kArm, 0) == 1 * MiB);  // DEFAULT_BUFFSIZE_ARM
  CHECK(nccl_simple_buffer_bytes(r218, NcclCpu::kIntel, 0) == 4 * MiB);
  CHECK(nccl_simple_buffer_bytes(r219, NcclCpu::kArm, 0) == 4 * MiB);   // gone from 2.19
  CHECK(nccl_simple_buffer_bytes(r218, NcclCpu::kArm, 16 * MiB) == 16 * MiB);
}

TEST_CASE("NCCL_BUFFSIZE sets the ring's slices and the tree's steps") {
  // 1 GiB AllReduce over 4 ranks on 32 channels: a rank's segment per channel is 1 GiB / 4 /
  // 32 = 8 MiB. The ring moves slices of 2 steps: 2 x 512 KiB = 1 MiB by default (8
  // pieces), 2 x 2 MiB = 4 MiB with a 16 MiB buffer (2 pieces).
  CHECK(nccl_piece_bytes(NcclProtocol::kSimple, ring(CollectiveOp::kAllReduce, GiB, 4, 32, 4 * MiB)) == 1 * MiB);
  CHECK(nccl_pieces(NcclProtocol::kSimple, ring(CollectiveOp::kAllReduce, GiB, 4, 32, 4 * MiB)) == 8);
  CHECK(nccl_piece_bytes(NcclProtocol::kSimple, ring(CollectiveOp::kAllReduce, GiB, 4, 32, 16 * MiB)) == 4 * MiB);
  CHECK(nccl_pieces(NcclProtocol::kSimple, ring(CollectiveOp::kAllReduce, GiB, 4, 32, 16 * MiB)) == 2);
  // A segment under two slices still goes in two (SLICESPERCHUNK): 64 MiB / 4 / 32 = 512
  // KiB, in two of 256 KiB whatever the buffer.
  CHECK(nccl_piece_bytes(NcclProtocol::kSimple, ring(CollectiveOp::kAllReduce, 64 * MiB, 4, 32, 16 * MiB)) == 256 * KiB);
  // The tree and the ring's Broadcast move one step: 2 MiB of a 16 MiB buffer, 128 KiB of 1 MiB.
  NcclPipelineFacts tree = ring(CollectiveOp::kAllReduce, GiB, 16, 8, 16 * MiB);
  tree.tree = true;
  tree.nodes = 2;
  CHECK(nccl_piece_bytes(NcclProtocol::kSimple, tree) == 2 * MiB);
  CHECK(nccl_piece_bytes(NcclProtocol::kSimple, ring(CollectiveOp::kBroadcast, 2 * MiB, 4, 1, 1 * MiB)) == 128 * KiB);
  // LL's and LL128's buffers are their own (NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE).
  CHECK(nccl_piece_bytes(NcclProtocol::kLL, ring(CollectiveOp::kAllReduce, GiB, 4, 32, 16 * MiB)) == 32 * KiB);
}

TEST_CASE("NCCL_BUFFSIZE caps NCCL's p2p chunk at an eighth of it") {
  // 8 GPUs of 18 NVLinks, 32 channels (a GB200 NVL domain), NCCL 2.28; 256 MiB AllToAll:
  // 32 MiB a peer, Simple. channels_min: 32 halved while x 8 ranks > 32: 4. By default the
  // chunk is NCCL_P2P_NVL_CHUNKSIZE, 512 KiB: a part may hold 32 chunks (16 MiB), so 4
  // parts of 8 MiB. A 1 MiB buffer caps the chunk at 128 KiB: parts of at most 4 MiB, so
  // the parts double to 8 (within half the 32 a peer may use), 4 MiB each.
  NcclP2pFacts f;
  f.ranks = 8;
  f.bytes_per_peer = 32 * MiB;
  f.comm_channels = 32;
  f.nvlinks_per_gpu = 18;
  f.nccl_minor = 28;
  const NcclP2pPlan wide = nccl_p2p_plan(f);
  CHECK(wide.protocol == NcclProtocol::kSimple);
  CHECK(wide.step_bytes == 512 * KiB);
  CHECK(wide.parts == 4);
  f.simple_buffer_bytes = 1 * MiB;
  const NcclP2pPlan narrow = nccl_p2p_plan(f);
  CHECK(narrow.step_bytes == 128 * KiB);
  CHECK(narrow.parts == 8);
  CHECK(narrow.part_bytes == 4 * MiB);
  // A larger buffer leaves the chunk alone (the cap only lowers it).
  f.simple_buffer_bytes = 16 * MiB;
  CHECK(nccl_p2p_plan(f).step_bytes == 512 * KiB);
}

TEST_CASE("network.nccl_buffsize reaches the tuner's facts, the pieces and the results' model line") {
  const ScenarioConfig config = load_config_text(
      "topology: {kind: nvswitch, gpus: 4, switches: 1, links_per_switch: 18, nvlink_bandwidth: 25GBps}\n"
      "network: {nccl_version: '2.28', nccl_buffsize: 16MiB}\n"
      "workload: {kind: collective, op: all_reduce, algorithm: ring, protocol: simple, bytes: 1GiB}\n",
      "<test>");
  CHECK(config.network.nccl_buffsize == 16 * MiB);
  TunerFacts f = tuner_facts(config.topology, 4);
  apply_nccl_settings(f, config.network);
  CHECK(f.buffsize == 16 * MiB);
  CHECK(nccl_simple_buffer_bytes(f) == 16 * MiB);
  CHECK(model_description("auto", f) == "NCCL 2.28 tuning rules, protocol auto, NCCL_BUFFSIZE=16777216");
  // The run's pieces: 1 GiB over 4 ranks on 32 channels, slices of 4 MiB.
  TunerChoice choice;
  choice.algorithm = "ring";
  choice.protocol = NcclProtocol::kSimple;
  CHECK(nccl_chunk_bytes(choice, CollectiveOp::kAllReduce, GiB, 32, f) == 4 * MiB);
  f.buffsize = 0;
  CHECK(nccl_chunk_bytes(choice, CollectiveOp::kAllReduce, GiB, 32, f) == 1 * MiB);
  CHECK(model_description("auto", f) == "NCCL 2.28 tuning rules, protocol auto");
}

TEST_CASE("a chunked ring Broadcast in a 1 MiB buffer's steps fills and drains, by hand") {
  // As tests/test_protocols.cpp's Broadcast (four GPUs of 18 x 25 GB/s NVLinks at 250 ns,
  // one channel at NCCL's 25 GB/s, 2 MiB), but NCCL_BUFFSIZE=1MiB: steps of 128 KiB, so 16
  // pieces of 32 packets of 4096 + 64 bytes, T = 32 x 4160 B / 25 GB/s each. The last GPU
  // has the last piece after the fill, 3 hops of (T + 2 packets at 450 GB/s + 2 x 250 ns
  // + NCCL's Simple NVLink step latency, 3.4 us, less the links' 0.5 us), and the drain,
  // 15 more pieces of T; NCCL's base latency for the ring with Simple, 8.4 us, first.
  const double packet_us = 4160.0 / 450e9 * 1e6;
  const double t_us = 32 * 4160.0 / 25e9 * 1e6;
  const double hop_us = t_us + 2 * packet_us + 2 * 0.25 + (3.4 - 0.5);
  const double expected_us = 8.4 + 3 * hop_us + 15 * t_us;
  ScenarioRun run(load_config_text(
      "topology: {kind: nvswitch, gpus: 4, switches: 1, links_per_switch: 18, nvlink_bandwidth: 25GBps, latency: 250ns}\n"
      "network: {mtu: 4KiB, header_bytes: 64, nccl_buffsize: 1MiB}\n"
      "workload: {kind: collective, op: broadcast, algorithm: ring, protocol: simple, channels: 1, bytes: 2MiB}\n",
      "bcast"));
  run.run();
  const CollectiveRow& row = run.collective()->rows()[0];
  MESSAGE("ring Simple Broadcast 2 MiB on 4 GPUs, 1 MiB buffer: " << to_us(row.time) << " us, by hand " << expected_us << " us");
  CHECK(row.data_check == "passed");
  CHECK(to_us(row.time) == within(expected_us, 1e-4));
}
