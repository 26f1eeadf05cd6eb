#pragma once
// A run that has stopped making progress: simulated time that no longer advances over
// many events, or nothing delivered over many events while started messages wait. Checked
// between chunks of events, never per event; the run stops with exit 4 and a diagnosis.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/time.h"

namespace fabricsim {

// What the watchdog saw and, from a short observed stretch after it, who kept the event
// queue busy and what they wait for.
struct NoProgress {
  std::string reason;
  Time at = 0;                             // the simulated time when it stopped
  std::vector<std::string> spinning;       // components, busiest first: share of events, name, state
  std::uint64_t messages_left = 0;         // started and unfinished
  std::vector<std::string> messages;       // the first few of them
};

// What the watchdog saw: which limit was passed, in words.
struct Stall {
  bool frozen = false;  // time stood still (else: nothing delivered)
  std::string reason;
};

class ProgressWatchdog {
 public:
  // Either limit 0: that check is off.
  ProgressWatchdog(std::uint64_t frozen_events, std::uint64_t undelivered_events)
      : frozen_events_(frozen_events), undelivered_events_(undelivered_events) {}
  // How many events may run between checks: a quarter of the tighter limit, so a stall is
  // caught within a quarter past it.
  std::uint64_t check_every(std::uint64_t at_most) const;
  // After a chunk: how the run has stalled, or nothing. `waiting`: messages have started
  // and are unfinished.
  std::optional<Stall> check(Time now, std::uint64_t events, std::uint64_t delivered_bytes, bool waiting);

 private:
  std::uint64_t frozen_events_, undelivered_events_;
  bool seen_ = false;
  Time last_time_ = 0;
  std::uint64_t time_moved_at_ = 0;       // events when simulated time last moved
  std::uint64_t last_delivered_ = 0;
  std::uint64_t delivered_moved_at_ = 0;  // events when a byte was last delivered (or nothing waited)
};

}  // namespace fabricsim
