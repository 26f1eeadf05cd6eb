#pragma once
// Built-in collective algorithms, compiled to per-rank programs (workloads/collectives/collective.h).
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/collectives/collective.h"

namespace fabricsim {

struct AlgorithmParams {
  int channels = 1;               // ring, tree: parallel rings / tree pairs
  std::int64_t chunk_bytes = 0;   // pipelining piece; 0: one piece per segment
  int root = 0;                   // broadcast, reduce, send_recv
  int local_size = 8;             // hierarchical: GPUs per node (ranks node-major)
  std::int64_t start_latency_ps = 0;  // nvls: fixed start-up cost before any rank moves data
};

// "ring", "tree", "halving_doubling", "recursive_doubling", "hierarchical", "direct", "nvls"
// (in-network: needs the ranks on one NVSwitch domain whose switches reduce).
const std::vector<std::string>& algorithm_names();

// Throws std::invalid_argument with a clear message when the algorithm does not do
// `op`, or not for this group size (e.g. halving-doubling on a non-power-of-two group).
// `bytes` follows nccl-tests: the per-rank buffer for all_reduce, broadcast, reduce and
// send_recv; the whole output for all_gather, the whole input for reduce_scatter and
// all_to_all.
// Ring channel `channel`'s members in ring order (position -> rank), as the ring algorithm
// lays them: across nodes (node-major ranks, local_size per node) channel ch leaves and
// enters nodes through local GPU ch or ch + 1, nodes alternating direction.
std::vector<int> ring_order(int n, int channel, const AlgorithmParams& params);

CollectiveProgram build_collective(const std::string& algorithm, CollectiveOp op, int ranks, std::int64_t bytes,
                                   const AlgorithmParams& params = {});

}  // namespace fabricsim
