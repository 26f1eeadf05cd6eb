#pragma once
// What a collective pays under NCCL's model for the (algorithm, protocol) the tuner chose:
// the protocol's bytes on the wire, NCCL's latencies less what the simulated links charge
// themselves, and each channel's own rate. `collective`, `run` and trace replays put the
// same costs on the same choice (docs/model.md, "NCCL's pipeline").
#include <cstdint>
#include <vector>

#include "workloads/collectives/collective.h"
#include "workloads/collectives/coupled_ring.h"
#include "workloads/collectives/tuner.h"

namespace fabricsim {

struct NcclCosts {
  double wire_factor = 1.0;                  // CollectiveProgram::wire_factor
  std::int64_t start_latency_ps = 0;         // at least this before any rank starts
  std::int64_t step_sync_ps[2] = {0, 0};     // CollectiveProgram::step_sync_ps
  double channel_bytes_per_second = 0;       // CollectiveProgram::channel_bytes_per_second
  int queue_pairs_per_connection = 1;        // CollectiveProgram::queue_pairs_per_connection
  std::int64_t proxy_op_ps = 0;              // CollectiveProgram::proxy_op_ps
  bool operator==(const NcclCosts&) const = default;
  bool operator<(const NcclCosts& o) const;  // a cache key's part
};

// `facts`: what the tuner saw of the collective's members (their count, nodes and the
// simulated network's own per-step latencies). None where the choice has no protocol.
// `bytes`: the operation's size; `channels`: the channels the config names (0: NCCL's,
// the choice's): for how many of NCCL's network steps each of the run's sends stands for.
NcclCosts nccl_costs(const TunerChoice& choice, const TunerFacts& facts, CollectiveOp op, std::int64_t bytes = 0, int channels = 0);

// The costs on a program built for the choice.
void apply_nccl_costs(CollectiveProgram& program, const NcclCosts& costs);

// The same costs on a coupled ring (its sends' rate cap where any edge stays inside a
// node, the edges' mean flag wait). `rank_node`: each of the collective's ranks' node,
// as the rings' edges name them (empty: all on one node).
CoupledRing::Costs coupled_ring_costs(const NcclCosts& costs, const std::vector<CoupledRing::Ring>& rings,
                                      const std::vector<std::uint32_t>& rank_node);

// Whether coupled rings with these costs keep to the step-by-step ring's time. A channel's
// pieces each go at the channel's rate, so inside one node a ring of many pieces spends
// the pipeline's fill and drain of every phase below its links' rate, which the coupled
// flow does not follow (8 GPUs of a DGX H100, 8 channels, Simple: 1 or 2 pieces within
// 1%, 4 and more about 124 us short); those run step by step. Across nodes the NICs bound
// it (2 x 8 GPUs: within 2.1% at 2 to 32 pieces).
bool coupled_ring_fits(const std::vector<CoupledRing::Ring>& rings, const CoupledRing::Costs& costs);

}  // namespace fabricsim
