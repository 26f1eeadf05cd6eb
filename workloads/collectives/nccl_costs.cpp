#include "workloads/collectives/nccl_costs.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/nccl_protocol.h"

namespace fabricsim {

bool NcclCosts::operator<(const NcclCosts& o) const {
  return std::tie(wire_factor, start_latency_ps, step_sync_ps[0], step_sync_ps[1], channel_bytes_per_second, queue_pairs_per_connection,
                  proxy_op_ps) < std::tie(o.wire_factor, o.start_latency_ps, o.step_sync_ps[0], o.step_sync_ps[1],
                                          o.channel_bytes_per_second, o.queue_pairs_per_connection, o.proxy_op_ps);
}

NcclCosts nccl_costs(const TunerChoice& choice, const TunerFacts& facts, CollectiveOp op, std::int64_t bytes, int channels) {
  NcclCosts c;
  if (choice.protocol == NcclProtocol::kNone) return c;
  // Every network connection NCCL opens (ring, tree, NVLS-tree, p2p) takes its queue pairs.
  c.queue_pairs_per_connection = std::max(1, facts.qps_per_connection);
  const auto ps = [](double us) { return static_cast<std::int64_t>(std::max(0.0, us) * 1e6); };
  if (choice.p2p) {
    // NCCL's p2p kernel: its launch at the start; each batch's fixed cost (and Simple's
    // drain of its last step) as each part's flag, less what the links charge; each part
    // at its channel's share.
    const double sync_us = nccl_p2p_batch_sync_us(*choice.p2p, facts.p2p);
    c.start_latency_ps = ps(facts.p2p.launch_us);
    c.step_sync_ps[0] = ps(sync_us - facts.intra_step_us);
    c.step_sync_ps[1] = ps((choice.protocol == NcclProtocol::kLL ? facts.p2p.ll_batch_us : facts.p2p.batch_us) - facts.inter_step_us);
    c.wire_factor = protocol_wire_factor(choice.protocol);
    c.channel_bytes_per_second = choice.nccl_channel_GBps * 1e9;
    return c;
  }
  const CollectiveAlgorithm* algorithm = find_collective_algorithm(choice.algorithm);
  if (algorithm != nullptr && algorithm->nccl_pipeline) {
    // The ring and the tree: the base at the start, and each step's latency on the step
    // itself, so the chain the simulation follows (its network steps, its pipeline's
    // fill) sets how many are paid; each channel at its own rate in NCCL's model, the
    // protocol's flags on the wire.
    c.start_latency_ps = ps(choice.nccl_steps.base_us);
    c.step_sync_ps[0] = ps(choice.nccl_steps.intra_us - facts.intra_step_us);
    c.step_sync_ps[1] = ps(choice.nccl_steps.inter_us - facts.inter_step_us);
    c.wire_factor = protocol_wire_factor(choice.protocol);
    c.channel_bytes_per_second = choice.nccl_channel_GBps * 1e9;
    if (facts.nodes > 1) {
      // NCCL's proxy thread launches each network step at its net overhead (ncclTopoTuneModel:
      // "inter-node rings still have to launch nsteps * net overheads": 1 us, 2 on AMD hosts,
      // x3 for Simple), one send after another. A run's send stands for as many as the
      // communicator's channels cut the same bytes into.
      const NcclSystem system = nccl_system(facts);
      const double overhead_us = system.net_overhead_us * (choice.protocol == NcclProtocol::kSimple ? 3 : 1);
      double per_piece = 1.0;
      // Channels the config names are NCCL's own: one send each.
      const int run = std::max(1, choice.nccl_channels), comm = std::max(run, system.comm_channels);
      if (channels <= 0 && comm > run && bytes > 0) {
        const auto pieces = [&](int count) {
          const auto f = nccl_pipeline_facts(choice, op, bytes, count, facts);
          return f ? static_cast<double>(nccl_pieces(choice.protocol, *f)) * count : 1.0;
        };
        per_piece = std::max(1.0, pieces(comm) / pieces(run));
      }
      c.proxy_op_ps = ps(overhead_us * per_piece);
    }
    return c;
  }
  // The others (NVLS, NVLS-tree, CollNet): NCCL's whole latency at the start, less the
  // links' own along the algorithm's critical path.
  c.wire_factor = choice.wire_factor;
  double wire_us = 0;
  if (algorithm != nullptr && algorithm->wire_latency_us != nullptr) {
    wire_us = algorithm->wire_latency_us({op, facts.ranks, facts.nodes, facts.intra_step_us, facts.inter_step_us});
  }
  c.start_latency_ps = ps(choice.nccl_latency_us - wire_us);
  return c;
}

void apply_nccl_costs(CollectiveProgram& p, const NcclCosts& c) {
  p.wire_factor = c.wire_factor;
  // The larger fixed start-up (a calibrated one or NCCL's latency), then any pipeline fill.
  p.start_latency_ps = std::max(p.start_latency_ps - p.start_fill_ps, c.start_latency_ps) + p.start_fill_ps;
  p.step_sync_ps[0] = c.step_sync_ps[0];
  p.step_sync_ps[1] = c.step_sync_ps[1];
  p.channel_bytes_per_second = c.channel_bytes_per_second;
  p.queue_pairs_per_connection = c.queue_pairs_per_connection;
  p.proxy_op_ps = c.proxy_op_ps;
}

CoupledRing::Costs coupled_ring_costs(const NcclCosts& c, const std::vector<CoupledRing::Ring>& rings,
                                      const std::vector<std::uint32_t>& rank_node) {
  std::size_t edges = 0, crossing = 0;
  for (const CoupledRing::Ring& ring : rings) {
    for (const auto& [from, to] : ring.edges) {
      ++edges;
      crossing += !rank_node.empty() && rank_node[from] != rank_node[to];
    }
  }
  CoupledRing::Costs costs;
  costs.wire_factor = c.wire_factor;
  costs.rate_cap_bps = crossing < edges ? c.channel_bytes_per_second * c.wire_factor * 8 : 0;
  // The flag waits of the edges in turn round the ring: their mean.
  const double across = edges > 0 ? static_cast<double>(crossing) / static_cast<double>(edges) : 0;
  costs.capped_edges = 1 - across;
  costs.step_sync = static_cast<Time>(std::llround(across * static_cast<double>(c.step_sync_ps[1]) +
                                                   (1 - across) * static_cast<double>(c.step_sync_ps[0])));
  costs.start_latency = c.start_latency_ps;
  return costs;
}

bool coupled_ring_fits(const std::vector<CoupledRing::Ring>& rings, const CoupledRing::Costs& costs) {
  constexpr int kMostPiecesInNode = 2;
  if (costs.rate_cap_bps <= 0 || costs.capped_edges < 1) return true;
  return std::all_of(rings.begin(), rings.end(), [](const CoupledRing::Ring& r) { return r.pieces <= kMostPiecesInNode; });
}

}  // namespace fabricsim
