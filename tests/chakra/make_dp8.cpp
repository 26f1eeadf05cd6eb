#include <algorithm>
// Writes tests/chakra: an 8-rank data-parallel step with a pipeline hand-off, as Chakra
// files and as our JSON Lines, from the same operations.
#include "workloads/traces/chakra/chakra_import.h"
#include "workloads/traces/trace.h"
#include <string>
using namespace fabricsim;
int main(int argc, char** argv) {
  Trace t;
  t.set_ranks(8);
  for (int r = 0; r < 8; ++r) {
    const auto& ops = t.ops[static_cast<std::size_t>(r)];
    int id = 0;
    auto compute = [&](int micros, std::vector<int> deps, const char* label) {
      TraceOp op; op.id = id++; op.kind = TraceOpKind::kCompute; op.duration = us(micros); op.label = t.name_id(label); t.add(r, op, deps); return op.id; };
    auto coll = [&](CollectiveOp o, std::int64_t bytes, std::vector<int> deps, const char* label) {
      TraceOp op; op.id = id++; op.kind = TraceOpKind::kCollective; op.op = o; op.bytes = bytes; op.label = t.name_id(label);
      op.group = t.group_id({0, 1, 2, 3, 4, 5, 6, 7});
      op.key = t.key_id("chakra/" + std::to_string(std::count_if(ops.begin(), ops.end(), [](const TraceOp& x) { return x.kind == TraceOpKind::kCollective; })));
      t.add(r, op, deps); return op.id; };
    int f = compute(200 + 10 * r, {}, "forward");
    int b1 = compute(300, {f}, "backward_l1");
    int ar1 = coll(CollectiveOp::kAllReduce, 8 << 20, {b1}, "grad_allreduce_l1");
    int b0 = compute(300, {b1}, "backward_l0");
    int ar0 = coll(CollectiveOp::kAllReduce, 8 << 20, {b0}, "grad_allreduce_l0");
    TraceOp p2p; p2p.id = id++; p2p.peer = r ^ 1; p2p.bytes = 1 << 20; p2p.tag = 3; p2p.label = t.name_id("handoff");
    p2p.kind = (r % 2 == 0) ? TraceOpKind::kSend : TraceOpKind::kRecv; t.add(r, p2p, std::vector<int>{ar0});
    int ag = coll(CollectiveOp::kAllGather, 4 << 20, {ar1, ar0}, "param_allgather");
    compute(50, {ag, p2p.id}, "optimizer");
  }
  // Run from the repository root: make_chakra_dp8 tests/chakra
  const std::string dir = argc > 1 ? argv[1] : ".";
  export_chakra(t, dir + "/dp8");
  write_trace(t, dir + "/dp8.jsonl");
}
