#include "workloads/collectives/collective_algorithms.h"

#include "workloads/collectives/collnet.h"
#include "workloads/collectives/nvls.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>
#include <stdexcept>

namespace fabricsim {
namespace {

int mod(int a, int n) { return ((a % n) + n) % n; }
bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

// Appends steps to rank programs and returns their indices.
struct Builder {
  CollectiveProgram& p;
  int add(int rank, Step s) {
    auto& steps = p.programs[static_cast<std::size_t>(rank)].steps;
    steps.push_back(std::move(s));
    return static_cast<int>(steps.size()) - 1;
  }
  int send(int rank, int peer, int channel, int src, int count, std::vector<int> deps) {
    Step s;
    s.kind = StepKind::kSend;
    s.peer = peer;
    s.channel = channel;
    s.src = src;
    s.count = count;
    s.deps = std::move(deps);
    return add(rank, std::move(s));
  }
  int recv(int rank, int peer, int channel, int dst, int count, bool reduce, std::vector<int> deps) {
    Step s;
    s.kind = reduce ? StepKind::kRecvReduce : StepKind::kRecv;
    s.peer = peer;
    s.channel = channel;
    s.dst = dst;
    s.count = count;
    s.deps = std::move(deps);
    return add(rank, std::move(s));
  }
  int copy(int rank, int src, int dst, int count) {
    Step s;
    s.kind = StepKind::kCopy;
    s.src = src;
    s.dst = dst;
    s.count = count;
    return add(rank, std::move(s));
  }
};

std::vector<int> deps_of(int a) { return a >= 0 ? std::vector<int>{a} : std::vector<int>{}; }
std::vector<int> deps_of(int a, int b) {
  std::vector<int> d;
  if (a >= 0) d.push_back(a);
  if (b >= 0 && b != a) d.push_back(b);
  return d;
}

CollectiveProgram empty_program(const std::string& name, CollectiveOp op, int ranks, int chunks, std::int64_t bytes,
                                int slots = -1) {
  CollectiveProgram p;
  p.name = name;
  p.op = op;
  p.ranks = ranks;
  p.chunks = chunks;
  p.slots = slots < 0 ? chunks : slots;
  p.slot_bytes = std::max<std::int64_t>(1, (bytes + chunks - 1) / chunks);
  p.programs.resize(static_cast<std::size_t>(ranks));
  return p;
}

// Pieces per segment for pipelining.
int pieces(std::int64_t segment_bytes, std::int64_t chunk_bytes) {
  if (chunk_bytes <= 0 || segment_bytes <= chunk_bytes) return 1;
  return static_cast<int>(std::min<std::int64_t>(4096, (segment_bytes + chunk_bytes - 1) / chunk_bytes));
}

// Ring over `members` (ring position -> rank). Segment j of piece stream q occupies
// `width` slots from slot(j, q). Reduce-scatter leaves member i owning segment i;
// all-gather starts from that. `after[i]` is a step member i's first send waits on;
// returns, per member, its last step (or -1). Sends of a stream wait for the previous
// stream's send at the same position, so pieces flow in order like NCCL's slices.
struct RingPlan {
  std::vector<int> members;
  int streams = 1;
  int width = 1;
  int channel_base = 0;
  std::function<int(int segment, int stream)> slot;
};

std::vector<int> ring_phase(Builder& b, const RingPlan& plan, bool reduce_scatter, const std::vector<int>& after) {
  const int n = static_cast<int>(plan.members.size());
  std::vector<int> last(static_cast<std::size_t>(n), -1);
  if (n < 2) return after;
  std::vector<std::vector<int>> prev_send(static_cast<std::size_t>(n), std::vector<int>(static_cast<std::size_t>(n - 1), -1));
  for (int q = 0; q < plan.streams; ++q) {
    const int channel = plan.channel_base + q;
    for (int i = 0; i < n; ++i) {
      const int r = plan.members[static_cast<std::size_t>(i)];
      const int next = plan.members[static_cast<std::size_t>(mod(i + 1, n))];
      const int prev = plan.members[static_cast<std::size_t>(mod(i - 1, n))];
      int have = after.empty() ? -1 : after[static_cast<std::size_t>(i)];
      int last_recv = -1;
      for (int t = 0; t < n - 1; ++t) {
        const int send_seg = reduce_scatter ? mod(i - 1 - t, n) : mod(i - t, n);
        const int recv_seg = reduce_scatter ? mod(i - 2 - t, n) : mod(i - 1 - t, n);
        const int s = b.send(r, next, channel, plan.slot(send_seg, q), plan.width,
                             deps_of(t == 0 ? have : last_recv, prev_send[static_cast<std::size_t>(i)][static_cast<std::size_t>(t)]));
        prev_send[static_cast<std::size_t>(i)][static_cast<std::size_t>(t)] = s;
        // A reducing receive must not overwrite what this rank is sending at the same step.
        last_recv = b.recv(r, prev, channel, plan.slot(recv_seg, q), plan.width, reduce_scatter, deps_of(s));
      }
      last[static_cast<std::size_t>(i)] = std::max(last[static_cast<std::size_t>(i)], last_recv);
    }
  }
  return last;
}

}  // namespace

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

namespace {

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
      for (int q = 0; q < c * k; ++q) {
        for (int pos = 0; pos < n; ++pos) {
          // Chain position pos: broadcast starts at the root; reduce ends at it.
          const int r = bcast ? mod(a.root + pos, n) : mod(a.root + 1 + pos, n);
          const int next = mod(r + 1, n);
          const int prev = mod(r - 1, n);
          int got = -1;
          if (pos > 0) got = b.recv(r, prev, q, q, 1, !bcast, {});
          if (pos < n - 1) b.send(r, next, q, q, 1, deps_of(got));
        }
      }
      return p;
    }
    default: break;
  }
  throw std::invalid_argument(std::string("ring does not do ") + op_name(op) + " (try direct)");
}

// Binary tree over positions 0..n-1 (heap order); `label[pos]` is the rank there.
// NCCL's tree AllReduce across whole nodes (ranks node-major, g per node): inside each
// node a chain of its GPUs, whose head (local c mod g on channel c, so channels spread
// over the NICs) joins two binary trees over the nodes, a heap order and its mirror
// (NCCL's double binary tree for an even node count: each node interior in one, a leaf
// in the other), each carrying half the data. Up: the chain reduces tail to head, the
// head adds its child nodes' partial sums and sends to its parent node's head; down:
// the reverse. Every hop between nodes joins two heads with the same local index: one
// rail.
CollectiveProgram nccl_tree(int n, int g, std::int64_t bytes, const AlgorithmParams& a) {
  const int nodes = n / g;
  const int trees = 2;
  const int c = std::max(1, a.channels);
  // Pipelined in NCCL's Simple step size unless told otherwise (a 4 MiB buffer in 8
  // steps: 512 KiB), as a chain of g GPUs and a tree would otherwise store and forward
  // whole halves.
  const int k = pieces(bytes / trees / c, a.chunk_bytes > 0 ? a.chunk_bytes : 512 * 1024);
  const int streams = trees * c * k;
  CollectiveProgram p = empty_program("tree", CollectiveOp::kAllReduce, n, streams, bytes);
  Builder b{p};
  // A rank's sends to one peer in one direction go piece after piece, as NCCL's slices
  // do (otherwise every piece would share the link at once and none finish early).
  std::map<std::tuple<int, int, int, int>, int> last_send;  // (rank, peer, direction, tree and channel) -> step
  const auto send = [&](int r, int peer, int ch, int slot, int dir, std::vector<int> deps) {
    auto [it, fresh] = last_send.try_emplace({r, peer, dir, slot % (trees * c)}, -1);
    if (it->second >= 0) deps.push_back(it->second);
    it->second = b.send(r, peer, ch, slot, 1, std::move(deps));
    return it->second;
  };
  for (int s = 0; s < streams; ++s) {
    const int t = s % trees;
    const int channel = (s / trees) % c;
    const int head = channel % g;
    // Chain position q of node `node`: its rank (q = 0 is the head).
    const auto at = [&](int node, int q) { return node * g + mod(head + q, g); };
    const auto node_at = [&](int pos) { return t == 0 ? pos : nodes - 1 - pos; };
    const int up_ch = 2 * s, down_ch = 2 * s + 1;
    std::vector<int> reduced(static_cast<std::size_t>(n), -1);  // step after which the rank's partial sum is complete
    // Up, chains first (tail to head), then heads from the leaves of the tree to the root.
    for (int node = 0; node < nodes; ++node) {
      int prev = -1;
      for (int q = g - 1; q >= 1; --q) {
        const int r = at(node, q);
        int have = -1;
        if (q < g - 1) have = b.recv(r, at(node, q + 1), up_ch, s, 1, true, {});
        prev = send(r, at(node, q - 1), up_ch, s, 0, deps_of(have));
        reduced[static_cast<std::size_t>(r)] = prev;
      }
      (void)prev;
    }
    for (int pos = nodes - 1; pos >= 0; --pos) {
      const int r = at(node_at(pos), 0);
      std::vector<int> got;
      if (g > 1) got.push_back(b.recv(r, at(node_at(pos), 1), up_ch, s, 1, true, {}));
      for (int child : {2 * pos + 1, 2 * pos + 2}) {
        if (child < nodes) got.push_back(b.recv(r, at(node_at(child), 0), up_ch, s, 1, true, {}));
      }
      int done = -1;
      if (got.size() == 1) done = got[0];
      if (got.size() > 1) {
        Step join;
        join.kind = StepKind::kNop;
        join.deps = got;
        done = b.add(r, join);
      }
      if (pos > 0) done = send(r, at(node_at((pos - 1) / 2), 0), up_ch, s, 0, deps_of(done));
      reduced[static_cast<std::size_t>(r)] = done;
    }
    // Down: the root's head has the total; heads pass it to their child nodes' heads and
    // down their own chain.
    for (int pos = 0; pos < nodes; ++pos) {
      const int node = node_at(pos);
      const int r = at(node, 0);
      int have = reduced[static_cast<std::size_t>(r)];
      if (pos > 0) have = b.recv(r, at(node_at((pos - 1) / 2), 0), down_ch, s, 1, false, deps_of(have));
      for (int child : {2 * pos + 1, 2 * pos + 2}) {
        if (child < nodes) send(r, at(node_at(child), 0), down_ch, s, 1, deps_of(have));
      }
      for (int q = 0; q + 1 < g; ++q) {
        const int from = at(node, q);
        send(from, at(node, q + 1), down_ch, s, 1, deps_of(have));
        have = b.recv(at(node, q + 1), from, down_ch, s, 1, false, deps_of(reduced[static_cast<std::size_t>(at(node, q + 1))]));
      }
    }
  }
  return p;
}

CollectiveProgram tree(CollectiveOp op, int n, std::int64_t bytes, const AlgorithmParams& a) {
  if (op != CollectiveOp::kAllReduce && op != CollectiveOp::kBroadcast && op != CollectiveOp::kReduce) {
    throw std::invalid_argument(std::string("tree does not do ") + op_name(op));
  }
  // Whole nodes of several GPUs: NCCL's layout (chains inside nodes, a double binary tree
  // across). One GPU per endpoint is NCCL's layout too: the two trees below are its
  // double binary tree over all ranks.
  const int g = a.local_size;
  if (op == CollectiveOp::kAllReduce && g > 1 && g < n && n % g == 0) return nccl_tree(n, g, bytes, a);
  // All-reduce runs two complementary trees (each rank a leaf in one of them, mostly),
  // each on half of the data; broadcast and reduce run one tree rooted at the root.
  const int trees = op == CollectiveOp::kAllReduce && n > 2 ? 2 : 1;
  const int c = std::max(1, a.channels);
  const int k = pieces(bytes / trees / c, a.chunk_bytes);
  const int streams = trees * c * k;
  CollectiveProgram p = empty_program("tree", op, n, streams, bytes);
  p.root = a.root;
  Builder b{p};
  for (int s = 0; s < streams; ++s) {
    const int t = s % trees;
    std::vector<int> label(static_cast<std::size_t>(n));
    for (int pos = 0; pos < n; ++pos) {
      const int base = op == CollectiveOp::kAllReduce ? pos : mod(pos + a.root, n);
      label[static_cast<std::size_t>(pos)] = t == 0 ? base : n - 1 - base;
    }
    const auto parent = [](int pos) { return (pos - 1) / 2; };
    std::vector<int> up(static_cast<std::size_t>(n), -1);  // step after which the position's subtree is reduced
    if (op != CollectiveOp::kBroadcast) {
      // Reduce: children before parents (higher positions first).
      for (int pos = n - 1; pos >= 0; --pos) {
        const int r = label[static_cast<std::size_t>(pos)];
        std::vector<int> got;
        for (int child : {2 * pos + 1, 2 * pos + 2}) {
          if (child < n) got.push_back(b.recv(r, label[static_cast<std::size_t>(child)], 2 * s, s, 1, true, {}));
        }
        int done = got.empty() ? -1 : got.back();
        if (got.size() == 2) {
          Step join;
          join.kind = StepKind::kNop;
          join.deps = got;
          done = b.add(r, join);
        }
        if (pos > 0) done = b.send(r, label[static_cast<std::size_t>(parent(pos))], 2 * s, s, 1, deps_of(done));
        up[static_cast<std::size_t>(pos)] = done;
      }
    }
    if (op != CollectiveOp::kReduce) {
      // Broadcast down: parents before children.
      std::vector<int> have(static_cast<std::size_t>(n), -1);
      have[0] = op == CollectiveOp::kAllReduce ? up[0] : -1;
      for (int pos = 0; pos < n; ++pos) {
        const int r = label[static_cast<std::size_t>(pos)];
        if (pos > 0) {
          have[static_cast<std::size_t>(pos)] =
              b.recv(r, label[static_cast<std::size_t>(parent(pos))], 2 * s + 1, s, 1, false, deps_of(up[static_cast<std::size_t>(pos)]));
        }
        for (int child : {2 * pos + 1, 2 * pos + 2}) {
          if (child < n) b.send(r, label[static_cast<std::size_t>(child)], 2 * s + 1, s, 1, deps_of(have[static_cast<std::size_t>(pos)]));
        }
      }
    }
  }
  return p;
}

// Recursive halving (reduce-scatter) and doubling (all-gather), Rabenseifner-style;
// recursive doubling all-reduce exchanges the whole buffer each round.
CollectiveProgram halving_doubling(CollectiveOp op, int n, std::int64_t bytes, bool doubling_only) {
  const char* name = doubling_only ? "recursive_doubling" : "halving_doubling";
  if (!power_of_two(n)) {
    throw std::invalid_argument(std::string(name) + " needs a power-of-two group, got " + std::to_string(n) + " ranks");
  }
  const bool ok = doubling_only ? (op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather)
                                : (op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllGather);
  if (!ok) throw std::invalid_argument(std::string(name) + " does not do " + op_name(op));
  CollectiveProgram p = empty_program(name, op, n, n, bytes);
  Builder b{p};
  int log = 0;
  while ((1 << log) < n) ++log;
  if (doubling_only && op == CollectiveOp::kAllReduce) {
    for (int r = 0; r < n; ++r) {
      int last = -1;
      for (int i = 0; i < log; ++i) {
        const int partner = r ^ (1 << i);
        const int s = b.send(r, partner, i, 0, n, deps_of(last));
        last = b.recv(r, partner, i, 0, n, true, deps_of(s));
      }
    }
    return p;
  }
  for (int r = 0; r < n; ++r) {
    int lo = r, width = 1, last = -1;  // the block of segments this rank holds reduced
    if (op != CollectiveOp::kAllGather) {
      // Halving: keep the half of the current block on this rank's side of `mask`,
      // send the other half to the partner and reduce the partner's copy of ours.
      lo = 0;
      width = n;
      for (int mask = n / 2; mask >= 1; mask /= 2) {
        const int partner = r ^ mask;
        width /= 2;
        const bool keep_low = (r & mask) == 0;
        const int keep = keep_low ? lo : lo + width;
        const int give = keep_low ? lo + width : lo;
        const int s = b.send(r, partner, 0, give, width, deps_of(last));
        last = b.recv(r, partner, 0, keep, width, true, deps_of(s));
        lo = keep;
      }
    }
    if (op == CollectiveOp::kReduceScatter) continue;
    // Doubling: blocks are aligned, so the partner's block is ours with `mask` flipped.
    for (int mask = 1; mask < n; mask *= 2) {
      const int partner = r ^ mask;
      const int partner_lo = lo ^ mask;
      b.send(r, partner, 1, lo, width, deps_of(last));
      last = b.recv(r, partner, 1, partner_lo, width, false, deps_of(last));
      lo = std::min(lo, partner_lo);
      width *= 2;
    }
  }
  return p;
}

// Hierarchical all-reduce: reduce-scatter among each node's GPUs, all-reduce of each
// part among the GPUs with the same local index (one per node: a rail), all-gather
// inside the node. Ranks are node-major.
CollectiveProgram hierarchical(CollectiveOp op, int n, std::int64_t bytes, const AlgorithmParams& a) {
  if (op != CollectiveOp::kAllReduce) throw std::invalid_argument(std::string("hierarchical does not do ") + op_name(op));
  const int g = std::min(a.local_size, n);
  if (g < 1 || n % g != 0) {
    throw std::invalid_argument("hierarchical needs the group to be whole nodes: " + std::to_string(n) + " ranks, " +
                                std::to_string(g) + " per node");
  }
  const int nodes = n / g;
  CollectiveProgram p = empty_program("hierarchical", op, n, g * nodes, bytes);
  Builder b{p};
  std::vector<int> after(static_cast<std::size_t>(n), -1);
  // Part j (a local index) spans slots [j * nodes, (j + 1) * nodes).
  for (int node = 0; node < nodes && g > 1; ++node) {
    RingPlan plan;
    for (int l = 0; l < g; ++l) plan.members.push_back(node * g + l);
    plan.width = nodes;
    plan.slot = [nodes](int seg, int) { return seg * nodes; };
    plan.channel_base = 0;
    const auto last = ring_phase(b, plan, true, {});
    for (int l = 0; l < g; ++l) after[static_cast<std::size_t>(node * g + l)] = last[static_cast<std::size_t>(l)];
  }
  for (int l = 0; l < g && nodes > 1; ++l) {
    RingPlan plan;
    std::vector<int> rail_after;
    for (int node = 0; node < nodes; ++node) {
      plan.members.push_back(node * g + l);
      rail_after.push_back(after[static_cast<std::size_t>(node * g + l)]);
    }
    plan.slot = [l, nodes](int seg, int) { return l * nodes + seg; };
    plan.channel_base = 1;
    const auto mid = ring_phase(b, plan, true, rail_after);
    plan.channel_base = 2;
    const auto last = ring_phase(b, plan, false, mid);
    for (int node = 0; node < nodes; ++node) after[static_cast<std::size_t>(node * g + l)] = last[static_cast<std::size_t>(node)];
  }
  for (int node = 0; node < nodes && g > 1; ++node) {
    RingPlan plan;
    std::vector<int> node_after;
    for (int l = 0; l < g; ++l) {
      plan.members.push_back(node * g + l);
      node_after.push_back(after[static_cast<std::size_t>(node * g + l)]);
    }
    plan.width = nodes;
    plan.slot = [nodes](int seg, int) { return seg * nodes; };
    plan.channel_base = 3;
    ring_phase(b, plan, false, node_after);
  }
  return p;
}

// Direct all-to-all: every rank sends each peer its block at once. Input blocks (by
// destination) are slots [0, n), output blocks (by source) [n, 2n).
CollectiveProgram direct(CollectiveOp op, int n, std::int64_t bytes, const AlgorithmParams& a) {
  if (op == CollectiveOp::kSendRecv) {
    const int k = pieces(bytes, a.chunk_bytes);
    CollectiveProgram p = empty_program("direct", op, n, k, bytes);
    p.root = a.root;
    Builder b{p};
    const int to = mod(a.root + 1, n);
    for (int q = 0; q < k; ++q) {
      b.send(a.root, to, 0, q, 1, {});
      b.recv(to, a.root, 0, q, 1, false, {});
    }
    return p;
  }
  if (op != CollectiveOp::kAllToAll) throw std::invalid_argument(std::string("direct does not do ") + op_name(op));
  CollectiveProgram p = empty_program("direct", op, n, n, bytes, 2 * n);
  p.output_offset = n;
  Builder b{p};
  for (int r = 0; r < n; ++r) {
    b.copy(r, r, n + r, 1);
    for (int d = 1; d < n; ++d) {
      const int to = mod(r + d, n);
      const int from = mod(r - d, n);
      b.send(r, to, 0, to, 1, {});
      b.recv(r, from, 0, n + from, 1, false, {});
    }
  }
  return p;
}

}  // namespace

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> names{"ring", "tree", "halving_doubling", "recursive_doubling", "hierarchical", "direct", "nvls", "nvls_tree", "collnet"};
  return names;
}

CollectiveProgram build_collective(const std::string& algorithm, CollectiveOp op, int ranks, std::int64_t bytes,
                                   const AlgorithmParams& params) {
  if (ranks < 2) throw std::invalid_argument("a collective needs at least two ranks");
  if (bytes < 1) throw std::invalid_argument("a collective needs at least one byte");
  if (op == CollectiveOp::kSendRecv && algorithm != "direct") throw std::invalid_argument("send_recv uses the direct algorithm");
  if (algorithm == "ring") return ring(op, ranks, bytes, params);
  if (algorithm == "tree") return tree(op, ranks, bytes, params);
  if (algorithm == "halving_doubling") return halving_doubling(op, ranks, bytes, false);
  if (algorithm == "recursive_doubling") return halving_doubling(op, ranks, bytes, true);
  if (algorithm == "hierarchical") return hierarchical(op, ranks, bytes, params);
  if (algorithm == "direct") return direct(op, ranks, bytes, params);
  if (algorithm == "nvls") return nvls(op, ranks, bytes, params);
  if (algorithm == "nvls_tree") return nvls_tree(op, ranks, bytes, params);
  if (algorithm == "collnet") return collnet(op, ranks, bytes, params);
  std::string known;
  for (const auto& n : algorithm_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown algorithm '" + algorithm + "'; expected one of " + known);
}

}  // namespace fabricsim
