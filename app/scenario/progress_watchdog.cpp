#include "app/scenario/progress_watchdog.h"

#include <algorithm>

#include "sim/core/units.h"

namespace fabricsim {

std::uint64_t ProgressWatchdog::check_every(std::uint64_t at_most) const {
  std::uint64_t every = at_most;
  if (frozen_events_ > 0) every = std::min(every, std::max<std::uint64_t>(1, frozen_events_ / 4));
  if (undelivered_events_ > 0) every = std::min(every, std::max<std::uint64_t>(1, undelivered_events_ / 4));
  return every;
}

std::optional<Stall> ProgressWatchdog::check(Time now, std::uint64_t events, std::uint64_t delivered_bytes, bool waiting) {
  if (!seen_ || now != last_time_) {
    last_time_ = now;
    time_moved_at_ = events;
  }
  if (!seen_ || delivered_bytes != last_delivered_ || !waiting) {
    last_delivered_ = delivered_bytes;
    delivered_moved_at_ = events;
  }
  seen_ = true;
  if (frozen_events_ > 0 && events - time_moved_at_ >= frozen_events_) {
    return Stall{true, "simulated time has stood at " + format_time(now) + " for " + std::to_string(events - time_moved_at_) +
           " events (stop.frozen_events: " + std::to_string(frozen_events_) + ")"};
  }
  if (undelivered_events_ > 0 && events - delivered_moved_at_ >= undelivered_events_) {
    return Stall{false, "no payload byte delivered over " + std::to_string(events - delivered_moved_at_) +
           " events while started messages wait (stop.undelivered_events: " + std::to_string(undelivered_events_) + ")"};
  }
  return std::nullopt;
}

}  // namespace fabricsim
