// The ring: NCCL's ring for AllReduce, ReduceScatter and AllGather (channels parallel
// rings, each laid over the nodes by ring_order), a pipeline along the ring for
// Broadcast and Reduce.
#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/program_builder.h"
#include "workloads/collectives/tuner.h"

namespace fabricsim {
namespace {

using namespace collective_building;

CollectiveProgram ring(CollectiveOp op, int n, std::int64_t bytes, const AlgorithmParams& a) {
  const int c = std::max(1, a.channels);
  switch (op) {
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather: {
      const std::int64_t segment = bytes / n / c;
      const int k = pieces(segment, a.chunk_bytes);
      CollectiveProgram p = empty_program("ring", op, n, n * c * k, bytes);
      p.streams_per_connection = 2 * k;  // channel ch: its reduce-scatter's k and all-gather's k
      Builder b{p};
      // Each channel is its own ring. Across nodes (node-major ranks, local_size per
      // node) channel ch leaves and enters nodes through local GPU ch or ch+1, so the
      // channels spread over a node's NICs as NCCL's do; and nodes alternate direction
      // (even: ch+1, ch+2, ..., ch; odd: ch, ch-1, ..., ch+1), so every hop between
      // nodes joins GPUs with the same local index: the same rail, never a spine
      // (with an even number of nodes).
      for (int ch = 0; ch < c; ++ch) {
        RingPlan plan;
        plan.members = ring_order(n, ch, a);
        plan.streams = k;
        // Segment-major chunk numbering (chunk = rank_segment * c * k + ch * k + piece),
        // so segment j is the j-th n-th of the buffer, as reduce-scatter and all-gather
        // define it; ring position i owns rank order[i]'s segment.
        plan.slot = [members = plan.members, c, k, ch](int pos, int piece) {
          return members[static_cast<std::size_t>(pos)] * c * k + ch * k + piece;
        };
        plan.channel_base = ch * 2 * k;
        std::vector<int> after;
        if (op != CollectiveOp::kAllGather) after = ring_phase(b, plan, true, {});
        if (op != CollectiveOp::kReduceScatter) {
          plan.channel_base = ch * 2 * k + k;
          ring_phase(b, plan, false, after);
        }
      }
      return p;
    }
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce: {
      // A pipeline along the ring: broadcast from the root round to root-1, reduce from
      // root+1 round to the root.
      const int k = pieces(bytes / c, a.chunk_bytes);
      CollectiveProgram p = empty_program("ring", op, n, c * k, bytes);
      p.root = a.root;
      Builder b{p};
      const bool bcast = op == CollectiveOp::kBroadcast;
      // A channel's pieces leave each rank one after the other, as its thread block sends them.
      std::vector<int> last_send(static_cast<std::size_t>(n * c), -1);
      for (int q = 0; q < c * k; ++q) {
        for (int pos = 0; pos < n; ++pos) {
          // Chain position pos: broadcast starts at the root; reduce ends at it.
          const int r = bcast ? mod(a.root + pos, n) : mod(a.root + 1 + pos, n);
          const int next = mod(r + 1, n);
          const int prev = mod(r - 1, n);
          int got = -1;
          if (pos > 0) got = b.recv(r, prev, q, q, 1, !bcast, {});
          if (pos < n - 1) {
            int& before = last_send[static_cast<std::size_t>(r * c + q % c)];
            before = b.send(r, next, q, q, 1, deps_of(got, before));
          }
        }
      }
      return p;
    }
    default: break;
  }
  throw std::invalid_argument(std::string("ring does not do ") + op_name(op) + " (try direct)");
}

bool does(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllGather ||
         op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce;
}

// busbw is the slowest hop of a channel times the channels, i.e. a GPU's NVLink inside a
// node, and across nodes the node's NICs; 2(n-1) steps (AllReduce) of two hops.
double ideal_estimate_us(CollectiveOp op, double size, const TunerFacts& f) {
  if (op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv) return -1;
  double busbw = f.nvlink_GBps > 0 ? f.nvlink_GBps : 0;
  if (f.nodes > 1 && f.node_nic_GBps > 0) busbw = busbw > 0 ? std::min(busbw, f.node_nic_GBps) : f.node_nic_GBps;
  if (busbw <= 0) return -1;
  const int n = std::max(2, f.ranks);
  const int steps = op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
  return steps * 2 * f.hop_latency_us + size / (busbw / busbw_factor(op, n) * 1e3);
}

}  // namespace

ProgramFootprint ring_footprint(const FootprintFacts& f) { return {4 * f.ranks * f.channels * f.pieces, 2 * f.channels, 240}; }

std::vector<int> ring_order(int n, int channel, const AlgorithmParams& a) {
  const int g = a.local_size > 0 && a.local_size < n && n % a.local_size == 0 ? a.local_size : n;
  std::vector<int> members;
  members.reserve(static_cast<std::size_t>(n));
  for (int node = 0; node < n / g; ++node) {
    for (int j = 0; j < g; ++j) {
      const int local = node % 2 == 0 ? mod(channel + 1 + j, g) : mod(channel - j, g);
      members.push_back(node * g + local);
    }
  }
  return members;
}

extern const CollectiveAlgorithm kRingAlgorithm{
    .name = "ring",
    .nccl_name = "Ring",
    .nccl = NcclAlgo::kRing,
    .protocols = ProtocolSupport::kAll,
    .nccl_pipeline = true,
    .does = does,
    .build = ring,
    .ideal_estimate_us = ideal_estimate_us,
};

}  // namespace fabricsim
