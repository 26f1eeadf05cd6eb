#include "sim/simulator.h"

#include <stdexcept>

namespace fabricsim {

void Simulator::scheduled_in_the_past() { throw std::logic_error("event scheduled in the past"); }

StopReason Simulator::run(Time until, std::uint64_t max_events) {
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
    // Equal links run in lock-step, so most events share their time with the next ones:
    // start loading the handler three ahead, and what the one two ahead will touch.
    // (Measured on the k=24 permutation: (2, 1) beat (1, 0) and (4, 2); a third stage,
    // prefetching the egress port an arriving packet will take, measured no gain.)
    if (EventHandler* later = queue_.peek(2)) __builtin_prefetch(later);
    if (EventHandler* next = queue_.peek(1)) next->prefetch();
    now_ = last_event_ = h->event_time();
    if (h->order() >= EventHandler::kMonitorKeys) {
      last_work_ = now_;
    } else {
      ++monitor_events_;
    }
    ++events_;
    h->on_event();
    if (stop_requested_) return StopReason::kRequested;
  }
  return StopReason::kQueueEmpty;
}

}  // namespace fabricsim
