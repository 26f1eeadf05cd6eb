// The price of one synchronisation between windows of a split run: every thread waits
// twice at a barrier (deliver and plan, then run and account), as sim/parallel/parallel_engine.cpp
// does, with no events in between: its spinning barrier, and std::barrier for comparison. items_per_second is windows per second, so its
// inverse is the floor a window costs however little it holds.
#include <benchmark/benchmark.h>

#include <barrier>
#include <thread>
#include <vector>

#include "sim/parallel/spin_barrier.h"

namespace {

template <template <typename> class Barrier>
void window_sync(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  constexpr int kWindows = 20'000;
  for (auto _ : state) {
    int planned = 0;
    auto completion = [&]() noexcept { ++planned; };
    Barrier<decltype(completion)> sync(threads, completion);
    const auto body = [&] {
      for (int w = 0; w < kWindows; ++w) {
        sync.arrive_and_wait();
        sync.arrive_and_wait();
      }
    };
    std::vector<std::thread> others;
    for (int t = 1; t < threads; ++t) others.emplace_back(body);
    body();
    for (std::thread& t : others) t.join();
    benchmark::DoNotOptimize(planned);
  }
  state.SetItemsProcessed(state.iterations() * kWindows);
}

// What sim/parallel/parallel_engine.cpp uses.
void BM_WindowSync(benchmark::State& state) { window_sync<fabricsim::SpinBarrier>(state); }
// The standard library's, for comparison.
void BM_WindowSyncStdBarrier(benchmark::State& state) { window_sync<std::barrier>(state); }
BENCHMARK(BM_WindowSync)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WindowSyncStdBarrier)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
