#include <algorithm>
// Writes tests/chakra: an 8-rank data-parallel step with a pipeline hand-off, as Chakra
// files and as our JSON Lines, from the same operations.
#include "workloads/chakra/chakra_import.h"
#include "workloads/trace.h"
#include <string>
using namespace fabricsim;
int main(int argc, char** argv) {
  Trace t;
  t.ranks = 8;
  t.ops.resize(8);
  for (int r = 0; r < 8; ++r) {
    auto& ops = t.ops[static_cast<std::size_t>(r)];
    int id = 0;
    auto compute = [&](int micros, std::vector<int> deps, const char* label) {
      TraceOp op; op.id = id++; op.kind = TraceOpKind::kCompute; op.duration = us(micros); op.deps = deps; op.label = label; ops.push_back(op); return op.id; };
    auto coll = [&](CollectiveOp o, std::int64_t bytes, std::vector<int> deps, const char* label) {
      TraceOp op; op.id = id++; op.kind = TraceOpKind::kCollective; op.op = o; op.bytes = bytes; op.deps = deps; op.label = label;
      for (int m = 0; m < 8; ++m) op.group.push_back(m);
      op.key = "chakra/" + std::to_string(std::count_if(ops.begin(), ops.end(), [](const TraceOp& x) { return x.kind == TraceOpKind::kCollective; }));
      ops.push_back(op); return op.id; };
    int f = compute(200 + 10 * r, {}, "forward");
    int b1 = compute(300, {f}, "backward_l1");
    int ar1 = coll(CollectiveOp::kAllReduce, 8 << 20, {b1}, "grad_allreduce_l1");
    int b0 = compute(300, {b1}, "backward_l0");
    int ar0 = coll(CollectiveOp::kAllReduce, 8 << 20, {b0}, "grad_allreduce_l0");
    TraceOp p2p; p2p.id = id++; p2p.peer = r ^ 1; p2p.bytes = 1 << 20; p2p.tag = 3; p2p.deps = {ar0}; p2p.label = "handoff";
    p2p.kind = (r % 2 == 0) ? TraceOpKind::kSend : TraceOpKind::kRecv; ops.push_back(p2p);
    int ag = coll(CollectiveOp::kAllGather, 4 << 20, {ar1, ar0}, "param_allgather");
    compute(50, {ag, p2p.id}, "optimizer");
  }
  // Run from the repository root: make_chakra_dp8 tests/chakra
  const std::string dir = argc > 1 ? argv[1] : ".";
  export_chakra(t, dir + "/dp8");
  write_trace(t, dir + "/dp8.jsonl");
}
