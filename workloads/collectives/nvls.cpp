#include "workloads/collectives/nvls.h"

#include "workloads/collectives/nccl_trees.h"
#include "workloads/collectives/tuner.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

namespace fabricsim {
namespace {

// Appends `rank`'s contributions on `channel`: for each piece j, one to each owner's sum
// (owners first_owner.. first_owner + owners - 1, local index q), one after another.
void add_contributions(CollectiveProgram& p, int rank, int first_owner, int owners, int group, int channel, int pieces,
                       const std::function<int(int, int, int)>& slot) {
  auto& steps = p.programs[static_cast<std::size_t>(rank)].steps;
  int previous = -1;
  for (int j = 0; j < pieces; ++j) {
    for (int q = 0; q < owners; ++q) {
      Step s;
      s.kind = StepKind::kSwitchReduce;
      s.peer = first_owner + q;
      s.group = group;
      s.channel = channel;
      s.src = slot(q, channel, j);
      if (previous >= 0) s.deps = {previous};
      steps.push_back(std::move(s));
      previous = static_cast<int>(steps.size()) - 1;
    }
  }
}

}  // namespace

std::int64_t nvls_pipeline_fill_ps(CollectiveOp op, std::int64_t bytes, int channels, int heads, std::int64_t chunk_bytes,
                                   double stage_bytes_per_second, double rounds) {
  if (stage_bytes_per_second <= 0 || bytes <= 0 || rounds <= 0) return 0;
  const double unoverlapped_rounds = op == CollectiveOp::kAllReduce ? rounds : rounds / 2;
  const double round = static_cast<double>(std::max(1, channels)) * std::max(1, heads) *
                       static_cast<double>(chunk_bytes > 0 ? chunk_bytes : kNvlsChunkBytes);
  return static_cast<std::int64_t>(std::llround(unoverlapped_rounds * std::min(static_cast<double>(bytes), round) / stage_bytes_per_second * 1e12));
}

std::int64_t nvls_head_visits_ps(std::int64_t bytes, int channels, int heads, std::int64_t chunk_bytes, std::int64_t head_cost_ps) {
  if (head_cost_ps <= 0 || bytes <= 0) return 0;
  const std::int64_t h = std::max(1, heads);
  const std::int64_t chunk = chunk_bytes > 0 ? chunk_bytes : kNvlsChunkBytes;
  const std::int64_t share = std::max<std::int64_t>(1, bytes / h / std::max(1, channels));
  const std::int64_t rounds = (share + chunk - 1) / chunk;
  // In floating point, capped far beyond any real run, so that no size overflows the clock.
  const double visits_ps = static_cast<double>(rounds) * static_cast<double>(h) * static_cast<double>(head_cost_ps);
  return static_cast<std::int64_t>(std::min(visits_ps, 1e18));
}

std::int64_t nvls_kernel_start_ps(CollectiveOp op, std::int64_t bytes, int channels, int heads, std::int64_t chunk_bytes,
                                  double stage_bytes_per_second, double fill_rounds, std::int64_t head_cost_ps) {
  return nvls_pipeline_fill_ps(op, bytes, channels, heads, chunk_bytes, stage_bytes_per_second, fill_rounds) +
         nvls_head_visits_ps(bytes, channels, heads, chunk_bytes, head_cost_ps);
}

CollectiveProgram nvls(CollectiveOp op, int n, std::int64_t bytes, const AlgorithmParams& a) {
  const bool reduce = op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter;
  const bool gather = op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather;
  if (!reduce && !gather) throw std::invalid_argument(std::string("nvls does not do ") + op_name(op));
  const int channels = a.channels > 1 ? a.channels : kNvlsChannels;
  // Pieces per (owner, channel): NCCL's NVLS chunk unless told otherwise.
  const std::int64_t chunk = a.chunk_bytes > 0 ? a.chunk_bytes : kNvlsChunkBytes;
  const std::int64_t share = std::max<std::int64_t>(1, bytes / n / channels);
  const int k = static_cast<int>(std::min<std::int64_t>(4096, (share + chunk - 1) / chunk));
  CollectiveProgram p;
  p.name = "nvls";
  p.start_fill_ps =
      nvls_kernel_start_ps(op, bytes, channels, n, chunk, a.nvls_stage_bytes_per_second, a.nvls_fill_rounds, a.nvls_head_cost_ps);
  p.start_latency_ps = a.start_latency_ps + p.start_fill_ps;
  p.op = op;
  p.ranks = n;
  p.chunks = n * channels * k;
  p.slots = p.chunks;
  p.slot_bytes = std::max<std::int64_t>(1, (bytes + p.chunks - 1) / p.chunks);
  p.programs.resize(static_cast<std::size_t>(n));
  // Owner-major slots, so that owner q's share is the contiguous block q (what
  // reduce_scatter leaves and all_gather starts from).
  const auto slot = [&](int owner, int channel, int piece) { return (owner * channels + channel) * k + piece; };
  const auto add = [&](int rank, Step s) {
    auto& steps = p.programs[static_cast<std::size_t>(rank)].steps;
    steps.push_back(std::move(s));
    return static_cast<int>(steps.size()) - 1;
  };
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < channels; ++c) {
      // Contributions in piece order, owners in turn, one after another per channel (as
      // a channel's threads walk the buffer), so the first sums are ready early and
      // their multicasts overlap the later contributions.
      if (reduce) add_contributions(p, r, 0, n, -1, c, k, slot);
      // This rank's own pieces: take each sum, then multicast it (all_gather: multicast
      // the input at once).
      int previous_multicast = -1;
      for (int j = 0; j < k; ++j) {
        int sum = -1;
        if (reduce) {
          Step s;
          s.kind = StepKind::kRecvSum;
          s.channel = c;
          s.dst = slot(r, c, j);
          sum = add(r, std::move(s));
        }
        if (gather) {
          Step s;
          s.kind = StepKind::kMulticast;
          s.channel = c;
          s.src = slot(r, c, j);
          if (sum >= 0) s.deps.push_back(sum);
          if (previous_multicast >= 0) s.deps.push_back(previous_multicast);
          previous_multicast = add(r, std::move(s));
        }
      }
      if (!gather) continue;
      // Every owner's multicasts, this rank's own included, in the order they are sent.
      for (int q = 0; q < n; ++q) {
        for (int j = 0; j < k; ++j) {
          Step s;
          s.kind = StepKind::kRecv;
          s.peer = q;
          s.channel = c;
          s.dst = slot(q, c, j);
          add(r, std::move(s));
        }
      }
    }
  }
  return p;
}

CollectiveProgram nvls_tree(CollectiveOp op, int n, std::int64_t bytes, const AlgorithmParams& a) {
  if (op != CollectiveOp::kAllReduce) throw std::invalid_argument(std::string("nvls_tree does not do ") + op_name(op));
  const int g = a.local_size;
  if (g < 2 || n % g != 0 || n / g < 2) {
    throw std::invalid_argument("nvls_tree needs whole nodes of at least two GPUs and at least two nodes: " +
                                std::to_string(n) + " ranks, " + std::to_string(g) + " per node (one node: use nvls)");
  }
  const int nodes = n / g;
  const int channels = a.channels > 1 ? a.channels : kNvlsChannels;
  const std::int64_t chunk = a.chunk_bytes > 0 ? a.chunk_bytes : kNvlsChunkBytes;
  const std::int64_t share = std::max<std::int64_t>(1, bytes / g / channels);
  const int k = static_cast<int>(std::min<std::int64_t>(4096, (share + chunk - 1) / chunk));
  CollectiveProgram p;
  p.name = "nvls_tree";
  p.op = op;
  p.ranks = n;
  p.start_fill_ps =
      nvls_kernel_start_ps(op, bytes, channels, g, chunk, a.nvls_stage_bytes_per_second, a.nvls_fill_rounds, a.nvls_head_cost_ps);
  p.start_latency_ps = a.start_latency_ps + p.start_fill_ps;
  p.chunks = g * channels * k;
  p.slots = p.chunks;
  p.slot_bytes = std::max<std::int64_t>(1, (bytes + p.chunks - 1) / p.chunks);
  p.streams_per_connection = 1;  // each channel its own connection to a peer, as in NCCL
  p.programs.resize(static_cast<std::size_t>(n));
  for (int node = 0; node < nodes; ++node) {
    std::vector<int> members;
    for (int l = 0; l < g; ++l) members.push_back(node * g + l);
    p.groups.push_back(std::move(members));
  }
  // Slots by local owner: local rank l of every node owns the same share.
  const auto slot = [&](int owner, int channel, int piece) { return (owner * channels + channel) * k + piece; };
  const auto add = [&](int rank, Step s) {
    auto& steps = p.programs[static_cast<std::size_t>(rank)].steps;
    steps.push_back(std::move(s));
    return static_cast<int>(steps.size()) - 1;
  };
  const auto transfer = [&](int rank, StepKind kind, int peer, int channel, int at, std::vector<int> deps) {
    Step s;
    s.kind = kind;
    s.peer = peer;
    s.channel = channel;
    if (kind == StepKind::kSend) s.src = at; else s.dst = at;
    s.deps = std::move(deps);
    return add(rank, std::move(s));
  };
  // NCCL's double binary tree over the nodes (nccl_trees.h): even channels take the first
  // tree, odd ones the second, as NCCL's NVLS trees do (src/graph/connect.cc), so every
  // rail carries its share both ways at any size.
  const std::array<BinaryTree, 2> node_trees{nccl_double_tree(nodes, 0), nccl_double_tree(nodes, 1)};
  for (int r = 0; r < n; ++r) {
    const int node = r / g, local = r % g;
    for (int c = 0; c < channels; ++c) {
      // 1. This node's sums: every GPU adds each piece into the switch's sum for its owner.
      add_contributions(p, r, node * g, g, node, c, k, slot);
      // 2. Own pieces: the node's sum, the tree across nodes on this GPU's rail, then a
      // multicast of the total to the node.
      int previous_multicast = -1;
      for (int j = 0; j < k; ++j) {
        const int at = slot(local, c, j);
        Step sum_step;
        sum_step.kind = StepKind::kRecvSum;
        sum_step.group = node;
        sum_step.channel = c;
        sum_step.dst = at;
        const int sum = add(r, std::move(sum_step));
        const BinaryTree& tree = node_trees[static_cast<std::size_t>(c % 2)];
        const int parent_node = tree.parent[static_cast<std::size_t>(node)];
        const auto& child_nodes = tree.children[static_cast<std::size_t>(node)];
        std::vector<int> gathered{sum};
        for (int child : child_nodes) {
          if (child >= 0) gathered.push_back(transfer(r, StepKind::kRecvReduce, child * g + local, c, at, {sum}));
        }
        int total = -1;
        if (parent_node < 0) {
          Step join;  // the root has the total once its children's partial sums are in
          join.kind = StepKind::kNop;
          join.deps = gathered;
          total = add(r, std::move(join));
        } else {
          const int parent = parent_node * g + local;
          const int up = transfer(r, StepKind::kSend, parent, c, at, gathered);
          total = transfer(r, StepKind::kRecv, parent, c, at, {up});
        }
        for (int child : child_nodes) {
          if (child >= 0) transfer(r, StepKind::kSend, child * g + local, c, at, {total});
        }
        Step m;
        m.kind = StepKind::kMulticast;
        m.group = node;
        m.channel = c;
        m.src = at;
        m.deps = {total};
        if (previous_multicast >= 0) m.deps.push_back(previous_multicast);
        previous_multicast = add(r, std::move(m));
      }
      // 3. Every owner's totals, by multicast from the node's GPUs (this one included).
      for (int q = 0; q < g; ++q) {
        for (int j = 0; j < k; ++j) transfer(r, StepKind::kRecv, node * g + q, c, slot(q, c, j), {});
      }
    }
  }
  return p;
}

namespace {

bool nvls_does(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllGather;
}
bool nvls_tree_does(CollectiveOp op) { return op == CollectiveOp::kAllReduce; }

// To the switches and back; NVLS-tree adds the NICs' tree down and up.
double nvls_wire_latency_us(const WireFacts& f) { return f.intra_step_us; }
double nvls_tree_wire_latency_us(const WireFacts& f) {
  return f.intra_step_us + 2 * floor_log2(std::max(1, f.nodes)) * f.inter_step_us;
}

// The switches sum and multicast the whole buffer at the NVSwitch layer's rate.
double nvls_ideal_estimate_us(CollectiveOp op, double size, const TunerFacts& f) {
  const bool reducing = op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllGather;
  if (!reducing || f.nvls_GBps <= 0 || f.nodes != 1) return -1;
  const double fill_us = 1e-6 * static_cast<double>(nvls_kernel_start_ps(op, static_cast<std::int64_t>(size), kNvlsChannels, f.ranks,
                                                                        kNvlsChunkBytes, f.nvls_GBps * 1e9, f.nvls_fill_rounds,
                                                                        std::llround(f.nvls_head_cost_us * 1e6)));
  return f.nvls_latency_us + fill_us + size / (f.nvls_GBps * 1e3);
}
// The switches sum and multicast the whole buffer; the busiest node's NICs carry it as
// often each way as NCCL's double tree puts on it (each GPU its share on its rail: once on
// two nodes, twice from four), over a tree of depth log2(nodes).
double nvls_tree_ideal_estimate_us(CollectiveOp op, double size, const TunerFacts& f) {
  if (op != CollectiveOp::kAllReduce || f.nvls_GBps <= 0 || f.nodes <= 1 || f.node_nic_GBps <= 0 || f.gpus_per_node < 2 ||
      f.ranks % f.gpus_per_node != 0) {
    return -1;
  }
  int depth = 0;
  for (int m = 1; m < f.nodes; m *= 2) ++depth;
  const double algbw = std::min(f.nvls_GBps, f.node_nic_GBps / nccl_double_tree_load(f.nodes));
  const double fill_us = 1e-6 * static_cast<double>(nvls_kernel_start_ps(op, static_cast<std::int64_t>(size), kNvlsChannels,
                                                                        f.gpus_per_node, kNvlsChunkBytes, f.nvls_GBps * 1e9,
                                                                        f.nvls_fill_rounds, std::llround(f.nvls_head_cost_us * 1e6)));
  return f.nvls_latency_us + fill_us + 2 * depth * 3 * f.hop_latency_us + size / (algbw * 1e3);
}

// Per channel, NVLS's pieces of each local owner's share, each with a contribution from
// every local GPU, a sum, a multicast and every owner's copy (nvls), a few sends and
// receives across nodes more (nvls_tree); matching keeps each step's targets (about 320
// bytes a step in all). Without NVLS on the node: a ring's figure.
ProgramFootprint nvls_footprint_with(const FootprintFacts& f, std::uint64_t extra_steps) {
  ProgramFootprint out = ring_footprint(f);
  if (f.nvls_gpus == 0) return out;
  out.steps = std::max(out.steps, f.nvls_channels * f.nvls_pieces * (2 * f.nvls_gpus + extra_steps));
  out.bytes_per_step = 320;
  return out;
}
ProgramFootprint nvls_footprint(const FootprintFacts& f) { return nvls_footprint_with(f, 2); }
ProgramFootprint nvls_tree_footprint(const FootprintFacts& f) { return nvls_footprint_with(f, 6); }

}  // namespace

extern const CollectiveAlgorithm kNvlsAlgorithm{
    .name = "nvls",
    .nccl_name = "NVLS",
    .nccl = NcclAlgo::kNvls,
    .protocols = ProtocolSupport::kSimpleOnly,
    .nvls_start = true,
    .does = nvls_does,
    .build = nvls,
    .wire_latency_us = nvls_wire_latency_us,
    .ideal_estimate_us = nvls_ideal_estimate_us,
    .footprint = nvls_footprint,
};
extern const CollectiveAlgorithm kNvlsTreeAlgorithm{
    .name = "nvls_tree",
    .nccl_name = "NVLSTree",
    .nccl = NcclAlgo::kNvlsTree,
    .protocols = ProtocolSupport::kSimpleOnly,
    .nvls_start = true,
    .does = nvls_tree_does,
    .build = nvls_tree,
    .wire_latency_us = nvls_tree_wire_latency_us,
    .ideal_estimate_us = nvls_tree_ideal_estimate_us,
    .footprint = nvls_tree_footprint,
};

}  // namespace fabricsim
