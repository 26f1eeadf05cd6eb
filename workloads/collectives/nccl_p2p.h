#pragma once
// NCCL's point-to-point path (ncclSend/ncclRecv; nccl-tests' AllToAll is one send and one
// receive per peer in a group), as NCCL 2.22-2.29 plan and run it (src/enqueue.cc
// addP2pToPlan and scheduleP2pTasksToPlan, src/graph/paths.cc ncclTopoComputeP2pChannels,
// src/include/channel.h, src/device/sendrecv.h):
//   - The communicator has p2p_channels = pow2Up(its channels) thread blocks for p2p, and
//     each peer may use up to pow2Up(min(those, 2 x the GPU's NVLinks)) of them (across
//     nodes, 2, halved while 2 x ranks > 4 x p2p_channels, at least one per NIC).
//   - Round d of the schedule sends to rank + d and receives from rank - d; its parts go
//     to channels (reverseBits(d) + part) mod p2p_channels.
//   - A peer's bytes go with LL up to channels-per-peer x 16 KiB (NCCL_P2P_LL_THRESHOLD;
//     2.29: its parts x 16 KiB; before 2.22: 16 KiB), else Simple in steps of NCCL's p2p
//     chunk (512 KiB on NVLink, 128 KiB across nodes); LL's step is 64 KiB of its buffer.
//   - Parts: starting from the per-peer channels halved until channels x ranks fits the
//     p2p channels, no smaller than a step / 8 (/ 2 across nodes), doubled while a part is
//     over 32 steps (1 step across nodes); the step is the protocol's (2.29 and before
//     2.22: Simple's).
//   - A channel runs its works in batches, one after another: a batch holds up to 8 works
//     of one epoch of 8 rounds.
// What this costs on the GPU (NcclP2pKernel) is fitted from one node's AllToAll
// (calibrate/p2p_fit.h); the network does the rest.
#include <cstdint>
#include <vector>

#include "workloads/collectives/nccl_protocol.h"

namespace fabricsim {

// One GPU's p2p kernel, per channel (thread block): what its copies move per second while
// it serves one send (Simple; LL in payload bytes), the fixed cost of one batch of works
// (the flags' round trips and the work's set-up, per protocol), the receiver's copy of its
// last Simple step out of NCCL's buffer (a step is stored, then forwarded), and the
// kernel's launch. 0 bandwidth: not modelled (AllToAll runs on the network alone).
struct NcclP2pKernel {
  double channel_GBps = 0;
  double ll_channel_GBps = 0;
  double batch_us = 0;
  double ll_batch_us = 0;
  double drain_GBps = 0;
  double launch_us = 0;
  bool operator==(const NcclP2pKernel&) const = default;
};

struct NcclP2pFacts {
  int ranks = 2;
  int nodes = 1;
  std::int64_t bytes_per_peer = 0;
  int comm_channels = 1;    // the communicator's channels (nccl_comm_channels)
  int nvlinks_per_gpu = 0;  // 0: no NVLink between the node's GPUs (2 channels per peer)
  int nics_per_node = 1;
  int gpus_per_node = 1;
  int nccl_minor = 28;  // the release, 2.<minor>: its rules for the protocol and the parts
  NcclProtocol protocol = NcclProtocol::kNone;  // LL or Simple asked for; kNone: NCCL's threshold
  // Simple's buffer: NCCL's p2p chunk is at most an eighth of it (computeBuffSizes, src/init.cc).
  std::int64_t simple_buffer_bytes = kNcclDefaultSimpleBuffer;
};

struct NcclP2pPlan {
  NcclProtocol protocol = NcclProtocol::kSimple;
  int p2p_channels = 1;       // thread blocks for p2p (a power of two)
  int channels_per_peer = 1;  // the most one peer may use
  int parts = 1;              // channels one peer's bytes are cut over
  std::int64_t part_bytes = 0;
  std::int64_t step_bytes = 0;  // payload of one step of NCCL's p2p buffer
  int batches = 1;              // on the busiest channel, one after another
  int most_sends_per_batch = 1;  // remote sends sharing one channel's batch, at most
};

NcclP2pPlan nccl_p2p_plan(const NcclP2pFacts& facts);

// The channel round `round`'s part `part` runs on.
int nccl_p2p_channel(const NcclP2pFacts& facts, int p2p_channels, int round, int part);

// Each (round, part)'s batch on its channel, index round x parts + part: batches run one
// after another on a channel; works of one batch run together.
std::vector<int> nccl_p2p_batches(const NcclP2pFacts& facts, int p2p_channels, int parts);

// The kernel's time for one batch beyond its transfer: its fixed cost, plus, for Simple,
// the receiver's copy of the last step (us).
double nccl_p2p_batch_sync_us(const NcclP2pPlan& plan, const NcclP2pKernel& kernel);

// The kernel alone, no network limit: launch + batches x (the batch's fixed cost + its
// sends' transfer at the channel's rate + the drain), in us. For tests and the fit.
double nccl_p2p_kernel_time_us(const NcclP2pPlan& plan, const NcclP2pKernel& kernel);

}  // namespace fabricsim
