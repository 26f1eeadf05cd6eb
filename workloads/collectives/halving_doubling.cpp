// Recursive halving and doubling (Rabenseifner), and recursive doubling: log2(n) rounds
// of pairwise exchanges on a power-of-two group.
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

CollectiveProgram halving(CollectiveOp op, int n, std::int64_t bytes, const AlgorithmParams&) {
  return halving_doubling(op, n, bytes, false);
}
CollectiveProgram doubling(CollectiveOp op, int n, std::int64_t bytes, const AlgorithmParams&) {
  return halving_doubling(op, n, bytes, true);
}
bool halving_does(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllGather;
}
bool doubling_does(CollectiveOp op) { return op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather; }

ProgramFootprint footprint(const FootprintFacts& f) { return {4 * f.log2_ranks, f.log2_ranks, 240}; }

}  // namespace

extern const CollectiveAlgorithm kHalvingDoublingAlgorithm{
    .name = "halving_doubling",
    .nccl_name = "-",
    .does = halving_does,
    .build = halving,
    .footprint = footprint,
};
extern const CollectiveAlgorithm kRecursiveDoublingAlgorithm{
    .name = "recursive_doubling",
    .nccl_name = "-",
    .does = doubling_does,
    .build = doubling,
    .footprint = footprint,
};

}  // namespace fabricsim
