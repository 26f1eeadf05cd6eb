// The tree: NCCL's double binary tree across whole nodes with a chain inside each, or
// over all ranks; AllReduce, Broadcast and Reduce.
#include <algorithm>
#include <array>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/nccl_trees.h"
#include "workloads/collectives/program_builder.h"

namespace fabricsim {
namespace {

using namespace collective_building;

// NCCL's tree AllReduce across whole nodes (ranks node-major, g per node): inside each
// node a chain of its GPUs, whose head (local c mod g on channel c, so channels spread
// over the NICs) joins NCCL's double binary tree over the nodes (nccl_trees.h), each of
// its two trees carrying half the data. Up: the chain reduces tail to head, the
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
  // Each tree's channel is an NCCL channel of its own (the second tree's are the first's
  // duplicates), with its own connection to a peer: streams s and s + trees x c share one.
  p.streams_per_connection = 2;
  p.connections = trees * c;
  Builder b{p};
  // A rank's sends to one peer in one direction go piece after piece, as NCCL's slices
  // do (otherwise every piece would share the link at once and none finish early).
  // A rank sends to at most three peers per direction on one tree and channel (up: its
  // chain's next or its parent node's head; down: two child nodes' heads and its chain's
  // next), the same peers for every piece: the last send to each, by (tree and channel,
  // rank, direction).
  struct LastSend {
    int peer = -1;
    int step = -1;
  };
  constexpr int kPeersPerDirection = 3;
  std::vector<LastSend> last_send(static_cast<std::size_t>(trees) * static_cast<std::size_t>(c) * static_cast<std::size_t>(n) * 2 *
                                  kPeersPerDirection);
  const auto send = [&](int r, int peer, int ch, int slot, int dir, std::vector<int> deps) {
    const std::size_t tree_channel = static_cast<std::size_t>(slot % (trees * c));
    LastSend* at = &last_send[((tree_channel * static_cast<std::size_t>(n) + static_cast<std::size_t>(r)) * 2 +
                               static_cast<std::size_t>(dir)) * kPeersPerDirection];
    LastSend* last = std::find_if(at, at + kPeersPerDirection, [&](const LastSend& l) { return l.peer == peer || l.peer < 0; });
    if (last == at + kPeersPerDirection) throw std::logic_error("tree: a rank with more than three peers one way");
    if (last->step >= 0) deps.push_back(last->step);
    last->peer = peer;
    last->step = b.send(r, peer, ch, slot, 1, std::move(deps));
    return last->step;
  };
  const std::array<BinaryTree, 2> node_trees{nccl_double_tree(nodes, 0), nccl_double_tree(nodes, 1)};
  for (int s = 0; s < streams; ++s) {
    const int t = s % trees;
    const int channel = (s / trees) % c;
    // Across nodes each channel's chain starts at the GPU of its NIC; inside one node
    // every channel is the same chain from rank 0 (NCCL's "Trees [c] ...": one parent
    // per rank on every channel), so its middle GPUs carry the data both ways.
    const int head = nodes == 1 ? 0 : channel % g;
    // Chain position q of node `node`: its rank (q = 0 is the head).
    const auto at = [&](int node, int q) { return node * g + mod(head + q, g); };
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
    const BinaryTree& tree = node_trees[static_cast<std::size_t>(t)];
    for (auto it = tree.top_down.rbegin(); it != tree.top_down.rend(); ++it) {
      const int node = *it;
      const int r = at(node, 0);
      std::vector<int> got;
      if (g > 1) got.push_back(b.recv(r, at(node, 1), up_ch, s, 1, true, {}));
      for (int child : tree.children[static_cast<std::size_t>(node)]) {
        if (child >= 0) got.push_back(b.recv(r, at(child, 0), up_ch, s, 1, true, {}));
      }
      int done = -1;
      if (got.size() == 1) done = got[0];
      if (got.size() > 1) {
        Step join;
        join.kind = StepKind::kNop;
        join.deps = got;
        done = b.add(r, join);
      }
      const int parent = tree.parent[static_cast<std::size_t>(node)];
      if (parent >= 0) done = send(r, at(parent, 0), up_ch, s, 0, deps_of(done));
      reduced[static_cast<std::size_t>(r)] = done;
    }
    // Down: the root's head has the total; heads pass it to their child nodes' heads and
    // down their own chain.
    for (int node : tree.top_down) {
      const int r = at(node, 0);
      int have = reduced[static_cast<std::size_t>(r)];
      const int parent = tree.parent[static_cast<std::size_t>(node)];
      if (parent >= 0) have = b.recv(r, at(parent, 0), down_ch, s, 1, false, deps_of(have));
      for (int child : tree.children[static_cast<std::size_t>(node)]) {
        if (child >= 0) send(r, at(child, 0), down_ch, s, 1, deps_of(have));
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
  // across), and on one node its chain. One GPU per endpoint is NCCL's layout too: the two trees below are its
  // double binary tree over all ranks.
  const int g = a.local_size;
  if (op == CollectiveOp::kAllReduce && g > 1 && g < n && n % g == 0) return nccl_tree(n, g, bytes, a);
  // One node: NCCL's tree is the node's chain alone (no tree across nodes to join).
  if (op == CollectiveOp::kAllReduce && a.one_node && n > 2) return nccl_tree(n, n, bytes, a);
  // All-reduce runs two complementary trees (each rank a leaf in one of them, mostly),
  // each on half of the data; broadcast and reduce run one tree rooted at the root.
  const int trees = op == CollectiveOp::kAllReduce && n > 2 ? 2 : 1;
  const int c = std::max(1, a.channels);
  const int k = pieces(bytes / trees / c, a.chunk_bytes);
  const int streams = trees * c * k;
  CollectiveProgram p = empty_program("tree", op, n, streams, bytes);
  p.root = a.root;
  p.streams_per_connection = 2;  // a connection per tree and channel, as above
  p.connections = trees * c;
  Builder b{p};
  // AllReduce: NCCL's double binary tree over the ranks; Broadcast and Reduce: its first
  // tree, turned so that the root sits at rank 0's place.
  const std::array<BinaryTree, 2> shapes{op == CollectiveOp::kAllReduce ? nccl_double_tree(n, 0) : nccl_binary_tree(n),
                                         nccl_double_tree(n, 1)};
  const auto rank_at = [&](int pos) { return op == CollectiveOp::kAllReduce ? pos : mod(pos + a.root, n); };
  for (int s = 0; s < streams; ++s) {
    const BinaryTree& shape = shapes[static_cast<std::size_t>(s % trees)];
    std::vector<int> up(static_cast<std::size_t>(n), -1);  // step after which the position's subtree is reduced
    if (op != CollectiveOp::kBroadcast) {
      // Reduce: children before parents.
      for (auto it = shape.top_down.rbegin(); it != shape.top_down.rend(); ++it) {
        const int pos = *it;
        const int r = rank_at(pos);
        std::vector<int> got;
        for (int child : shape.children[static_cast<std::size_t>(pos)]) {
          if (child >= 0) got.push_back(b.recv(r, rank_at(child), 2 * s, s, 1, true, {}));
        }
        int done = got.empty() ? -1 : got.back();
        if (got.size() == 2) {
          Step join;
          join.kind = StepKind::kNop;
          join.deps = got;
          done = b.add(r, join);
        }
        const int parent = shape.parent[static_cast<std::size_t>(pos)];
        if (parent >= 0) done = b.send(r, rank_at(parent), 2 * s, s, 1, deps_of(done));
        up[static_cast<std::size_t>(pos)] = done;
      }
    }
    if (op != CollectiveOp::kReduce) {
      // Broadcast down: parents before children.
      std::vector<int> have(static_cast<std::size_t>(n), -1);
      for (int pos : shape.top_down) {
        const int r = rank_at(pos);
        const int parent = shape.parent[static_cast<std::size_t>(pos)];
        if (parent >= 0) {
          have[static_cast<std::size_t>(pos)] =
              b.recv(r, rank_at(parent), 2 * s + 1, s, 1, false, deps_of(up[static_cast<std::size_t>(pos)]));
        } else if (op == CollectiveOp::kAllReduce) {
          have[static_cast<std::size_t>(pos)] = up[static_cast<std::size_t>(pos)];
        }
        for (int child : shape.children[static_cast<std::size_t>(pos)]) {
          if (child >= 0) b.send(r, rank_at(child), 2 * s + 1, s, 1, deps_of(have[static_cast<std::size_t>(pos)]));
        }
      }
    }
  }
  return p;
}

bool does(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce;
}

ProgramFootprint footprint(const FootprintFacts& f) { return {6 * f.channels * f.pieces, 2 * f.channels, 300}; }

}  // namespace

extern const CollectiveAlgorithm kTreeAlgorithm{
    .name = "tree",
    .nccl_name = "Tree",
    .nccl = NcclAlgo::kTree,
    .protocols = ProtocolSupport::kAll,
    .nccl_pipeline = true,
    .does = does,
    .build = tree,
    .footprint = footprint,
};

}  // namespace fabricsim
