// Building and checking a collective's step program before a run: NCCL's double binary
// tree AllReduce (8 GPUs a node, 16 channels, 64 MiB: 4 pieces a channel's half), whose
// steps grow with ranks times pieces. items_per_second is steps per second.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/collective_data.h"

namespace {

using namespace fabricsim;

AlgorithmParams tree_params() {
  AlgorithmParams a;
  a.channels = 16;
  a.chunk_bytes = 512 * 1024;
  a.local_size = 8;
  return a;
}

std::int64_t steps_of(const CollectiveProgram& p) {
  std::int64_t steps = 0;
  for (const auto& rank : p.programs) steps += static_cast<std::int64_t>(rank.steps.size());
  return steps;
}

void BM_TreeProgramBuild(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  std::int64_t steps = 0;
  for (auto _ : state) {
    const CollectiveProgram p = build_collective("tree", CollectiveOp::kAllReduce, ranks, 64 << 20, tree_params());
    steps += steps_of(p);
  }
  state.SetItemsProcessed(steps);
}
BENCHMARK(BM_TreeProgramBuild)->Arg(1000)->Arg(4000)->Arg(16000)->Unit(benchmark::kMillisecond);

void BM_TreeProgramCheck(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const CollectiveProgram p = build_collective("tree", CollectiveOp::kAllReduce, ranks, 64 << 20, tree_params());
  for (auto _ : state) benchmark::DoNotOptimize(check_program(p, false));
  state.SetItemsProcessed(steps_of(p) * static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_TreeProgramCheck)->Arg(1000)->Arg(4000)->Arg(16000)->Unit(benchmark::kMillisecond);

}  // namespace
