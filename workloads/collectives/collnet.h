#pragma once
// CollNet Direct (NCCL's AllReduce with InfiniBand SHARP): inside each node the GPUs
// reduce-scatter directly over NVLink (local GPU l owns 1/g of the buffer); each owner
// hands its share to the SHARP switch of its rail, which sums the nodes' shares and
// returns the total to every one of them; the owners then send it to their node's GPUs.
// Ranks node-major, params.local_size per node; needs rail switches that reduce
// (`sharp:` on a rail-optimized fabric). all_reduce only.
#include <cstdint>

#include "workloads/collectives/collective.h"
#include "workloads/collectives/collective_algorithms.h"

namespace fabricsim {

CollectiveProgram collnet(CollectiveOp op, int ranks, std::int64_t bytes, const AlgorithmParams& params);

}  // namespace fabricsim
