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

// all_reduce (both phases), reduce_scatter (the sums), all_gather (the multicasts).
// Throws std::invalid_argument for other operations.
CollectiveProgram nvls(CollectiveOp op, int ranks, std::int64_t bytes, const AlgorithmParams& params);

// NVLS-tree (NCCL's default AllReduce across H100 nodes): NVLS sums inside each node
// (params.local_size GPUs, ranks node-major), each GPU's share reduced across nodes over
// its own rail by two binary trees (pieces alternate between a tree and its mirror, so
// each rail carries its share once each way), then NVLS multicast of the totals inside
// each node. The network carries 1/local_size of the buffer per GPU each way, which is
// how its busbw passes a ring's NIC-bound ceiling. all_reduce only.
CollectiveProgram nvls_tree(CollectiveOp op, int ranks, std::int64_t bytes, const AlgorithmParams& params);

}  // namespace fabricsim
