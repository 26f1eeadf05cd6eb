#pragma once
// NVLS: NCCL's algorithm for NVLink SHARP (NVSwitch gen3 and later). Each rank owns
// 1/n of the buffer; every rank adds its copy of each piece to the sum the switch
// delivers to the piece's owner (multimem.ld_reduce), and the owner multicasts the sum
// back to every rank through the switch (multimem.st). Per rank, the NVLinks carry the
// buffer once out (contributions) plus 1/n (the multicast), and the sums and copies
// once in: the switch's reduction rate, not the GPU's links, is what binds on H100.
#include <cstdint>

#include "workloads/collectives/collective.h"
#include "workloads/collectives/collective_algorithms.h"

namespace fabricsim {

// NCCL's NVLS pipelining piece (NCCL_NVLS_CHUNKSIZE default, 128 KiB).
inline constexpr std::int64_t kNvlsChunkBytes = 128 * 1024;
// NCCL's NVLS channels on Hopper (NCCL_NVLS_NCHANNELS default, 16): used unless the
// parameters ask for more than one channel.
inline constexpr int kNvlsChannels = 16;

// NCCL's NVLS kernels on buffers not registered with NCCL (as nccl-tests runs them, and
// always inside an MNNVL domain, src/init.cc) are a pipeline of warp groups per channel.
// AllReduce (src/device/all_reduce.h) has three: scatter (the input into each head's slot
// of the NVLS buffer), reduce and multicast through the switch, gather (the slots into the
// output); ReduceScatter two (scatter, reduce), AllGather two (multicast, gather). A round
// is one chunk per channel and head, channels x heads x chunk bytes (all the bytes when
// fewer), as long as it takes through the switch at `stage_bytes_per_second`. What nothing
// overlaps is `rounds` of them for an AllReduce: at least its stages less one (2), more
// where the stages are slower than the switch or wait on each other (a calibrated profile
// fits it); half as many for the two-stage kernels. 0 when the rate is 0.
std::int64_t nvls_pipeline_fill_ps(CollectiveOp op, std::int64_t bytes, int channels, int heads, std::int64_t chunk_bytes,
                                   double stage_bytes_per_second, double rounds);

// The same kernels' visits to the heads: each round, a channel's scatter (and gather)
// warps copy one chunk to (from) every head in turn (Primitives::ScatterGatherOp, its
// loop over peers), and each visit costs a fixed time beyond its bytes (its loads'
// latency, its flags). A channel makes ceil(bytes / heads / channels / chunk) rounds, so
// the visits add rounds x heads x `head_cost_ps`: a few us a round on 8 GPUs, tens on 64.
// The switch does not see them: like the fill, they are paid at the collective's start.
std::int64_t nvls_head_visits_ps(std::int64_t bytes, int channels, int heads, std::int64_t chunk_bytes, std::int64_t head_cost_ps);

// What the NVLS kernel adds to NCCL's latency at a collective's start: its fill and its
// visits to the heads (the two above).
std::int64_t nvls_kernel_start_ps(CollectiveOp op, std::int64_t bytes, int channels, int heads, std::int64_t chunk_bytes,
                                  double stage_bytes_per_second, double fill_rounds, std::int64_t head_cost_ps);

// all_reduce (both phases), reduce_scatter (the sums), all_gather (the multicasts).
// Throws std::invalid_argument for other operations.
CollectiveProgram nvls(CollectiveOp op, int ranks, std::int64_t bytes, const AlgorithmParams& params);

// NVLS-tree (NCCL's default AllReduce across H100 nodes): NVLS sums inside each node
// (params.local_size GPUs, ranks node-major), each GPU's share reduced across nodes over
// its own rail by NCCL's double binary tree (channels alternate between its two trees;
// on two nodes each rail carries its share once each way, from four on an interior node's
// rail twice), then NVLS multicast of the totals inside each node. The network carries
// 1/local_size of the buffer per GPU, which is how its busbw passes a ring's NIC-bound
// ceiling. all_reduce only.
CollectiveProgram nvls_tree(CollectiveOp op, int ranks, std::int64_t bytes, const AlgorithmParams& params);

}  // namespace fabricsim
