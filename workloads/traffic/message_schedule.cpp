#include "workloads/traffic/message_schedule.h"

#include <algorithm>

namespace fabricsim {

void MessageSchedule::arm() {
  std::stable_sort(starts_.begin(), starts_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  next_ = 0;
  Simulator& sim = *sim_;
  if (!starts_.empty()) sim.schedule_at(*this, std::max(starts_.front().first, sim.now()));
}

void MessageSchedule::on_event() {
  Simulator& sim = *sim_;
  while (next_ < starts_.size() && starts_[next_].first <= sim.now()) network_->post(starts_[next_++].second);
  if (next_ < starts_.size()) sim.schedule_at(*this, starts_[next_].first);
}

}  // namespace fabricsim
