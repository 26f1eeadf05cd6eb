// Direct: every rank straight to every other (AllToAll), and point to point (SendRecv).
#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/program_builder.h"

namespace fabricsim {
namespace {

using namespace collective_building;

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

bool does(CollectiveOp op) { return op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv; }

ProgramFootprint footprint(const FootprintFacts& f) { return {2 * f.ranks, f.ranks, 240}; }

}  // namespace

extern const CollectiveAlgorithm kDirectAlgorithm{
    .name = "direct",
    .nccl_name = "-",
    .does = does,
    .build = direct,
    .footprint = footprint,
};

}  // namespace fabricsim
