// Direct: every rank straight to every other (AllToAll), and point to point (SendRecv).
#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/nccl_p2p.h"
#include "workloads/collectives/program_builder.h"

namespace fabricsim {
namespace {

using namespace collective_building;

// NCCL's AllToAll: round d sends to rank + d and receives from rank - d, each block cut in
// `channels` parts on NCCL's p2p channels; a channel's next batch of works starts when its
// last one is done. Input slot (destination, part) = destination x parts + part; output
// likewise by source, after the input.
CollectiveProgram nccl_p2p_all_to_all(int n, std::int64_t bytes, const AlgorithmParams& a) {
  const int k = std::max(1, a.channels);
  const int channels = a.p2p_channels;
  CollectiveProgram p = empty_program("direct", CollectiveOp::kAllToAll, n, n * k, bytes, 2 * n * k);
  p.output_offset = n * k;
  Builder b{p};
  NcclP2pFacts f;
  f.ranks = n;
  f.gpus_per_node = a.local_size > 0 && a.local_size < n && n % a.local_size == 0 ? a.local_size : n;
  f.nodes = n / f.gpus_per_node;
  const std::vector<int> batch_of = nccl_p2p_batches(f, channels, k);
  std::vector<int> channel_of(static_cast<std::size_t>(n) * static_cast<std::size_t>(k));
  for (int d = 0; d < n; ++d) {
    for (int part = 0; part < k; ++part) channel_of[static_cast<std::size_t>(d * k + part)] = nccl_p2p_channel(f, channels, d, part);
  }
  for (int r = 0; r < n; ++r) {
    b.copy(r, r * k, n * k + r * k, k);
    // Per channel: the steps of its previous batch and of its open one.
    std::vector<std::vector<int>> previous(static_cast<std::size_t>(channels)), open(previous.size());
    std::vector<int> open_batch(previous.size(), 0);
    for (int d = 1; d < n; ++d) {
      const int to = mod(r + d, n), from = mod(r - d, n);
      for (int part = 0; part < k; ++part) {
        const int c = channel_of[static_cast<std::size_t>(d * k + part)];
        const auto ci = static_cast<std::size_t>(c);
        const int batch = batch_of[static_cast<std::size_t>(d * k + part)];
        if (batch != open_batch[ci]) {
          previous[ci] = std::move(open[ci]);
          open[ci].clear();
          open_batch[ci] = batch;
        }
        open[ci].push_back(b.send(r, to, c, to * k + part, 1, previous[ci]));
        open[ci].push_back(b.recv(r, from, c, n * k + from * k + part, 1, false, previous[ci]));
      }
    }
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
  if (a.p2p_channels > 0) return nccl_p2p_all_to_all(n, bytes, a);
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

bool does(CollectiveOp op) { return op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv; }

// Under NCCL's model each block is cut in up to `channels` parts, a send and a receive each.
ProgramFootprint footprint(const FootprintFacts& f) { return {2 * f.ranks * std::max<std::uint64_t>(1, f.channels) + 1, f.ranks, 240}; }

}  // namespace

extern const CollectiveAlgorithm kDirectAlgorithm{
    .name = "direct",
    .nccl_name = "-",
    .does = does,
    .build = direct,
    .footprint = footprint,
};

}  // namespace fabricsim
