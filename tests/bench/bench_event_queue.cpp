// Event queue throughput in the classic "hold" model: with N events pending, pop the
// earliest and schedule its handler again a random time later. One iteration is one
// schedule+pop pair; items_per_second in the output is pairs per second.
#include <benchmark/benchmark.h>

#include <vector>

#include "sim/core/event_queue.h"
#include "sim/core/rng.h"

namespace {

using namespace fabricsim;

struct Noop final : EventHandler {
  void on_event() override {}
};

void BM_EventQueueHold(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  std::vector<Noop> handlers(pending);
  EventQueue queue;
  Rng rng(42);
  // Increments up to 1 us: spreads events like many busy ports with packet-scale gaps.
  for (auto& h : handlers) queue.schedule(h, static_cast<Time>(rng.below(1'000'000)));
  for (auto _ : state) {
    EventHandler* h = queue.pop();
    queue.schedule(*h, h->event_time() + 1 + static_cast<Time>(rng.below(1'000'000)));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueueHold)->Arg(1'000)->Arg(100'000)->Arg(1'000'000);

}  // namespace
