#include "sim/core/simulator.h"

#include <stdexcept>

namespace fabricsim {

void Simulator::scheduled_in_the_past() { throw std::logic_error("event scheduled in the past"); }

namespace {
// How many events ahead each prefetch stage works (see run()).
constexpr std::size_t kPrefetchLines = 6;
constexpr std::size_t kPrefetchFirst = 4;
constexpr std::size_t kPrefetchNext = 2;
constexpr std::size_t kPrefetchLast = 1;
}  // namespace

// The event loop, telling `seen` of each handler before its event (run() passes a
// no-op, which compiles away).
template <class Seen>
StopReason Simulator::run_loop(Time until, std::uint64_t max_events, Seen&& seen) {
  std::uint64_t budget = max_events;
  if (stop_requested_) return StopReason::kRequested;
  while (!queue_.empty()) {
    if (!queue_.due_by(until)) {
      now_ = until;
      return StopReason::kTimeLimit;
    }
    if (budget == 0) return StopReason::kEventLimit;
    --budget;
    EventHandler* h = queue_.pop_due();
    // Equal links run in lock-step, so most events share their time with the next ones
    // (at k=32, over 90% have nine or more behind them). Prefetching is a pipeline over
    // the events ahead: the handler's first two lines (all of a link; a port asks for its
    // third in prefetch()), then what those point to (prefetch():
    // a link's head packet and far end), then what that points to (prefetch_next(): the
    // route rows and buffer counters at the far end), then the egress port the packet
    // will take (prefetch_last()). Each stage reads only lines an earlier one asked for.
    // The distances are docs/performance.md's best measured.
    if (EventHandler* later = queue_.peek(kPrefetchLines)) {
      const char* lines = reinterpret_cast<const char*>(later);
      __builtin_prefetch(lines);
      __builtin_prefetch(lines + 64);
    }
    if (EventHandler* next = queue_.peek(kPrefetchFirst)) next->prefetch();
    if (EventHandler* next = queue_.peek(kPrefetchNext)) next->prefetch_next();
    if (EventHandler* next = queue_.peek(kPrefetchLast)) next->prefetch_last();
    now_ = last_event_ = h->event_time();
    if (h->order() >= EventHandler::kMonitorKeys) {
      last_work_ = now_;
    } else {
      ++monitor_events_;
    }
    ++events_;
    seen(*h);
    h->on_event();
    if (stop_requested_) return StopReason::kRequested;
  }
  return StopReason::kQueueEmpty;
}

StopReason Simulator::run(Time until, std::uint64_t max_events) {
  return run_loop(until, max_events, [](const EventHandler&) {});
}

StopReason Simulator::run_observed(Time until, std::uint64_t max_events, const std::function<void(const EventHandler&)>& seen) {
  return run_loop(until, max_events, seen);
}

}  // namespace fabricsim
