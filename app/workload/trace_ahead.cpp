#include "app/workload/trace_ahead.h"

#include <utility>

namespace fabricsim {

namespace {
struct Stopped {};  // thrown out of the generator between replicas
}  // namespace

TraceAhead::TraceAhead(const TraceWorkloadConfig& config, RoutingProgress progress) : progress_(std::move(progress)) {
  made_ = std::async(std::launch::async, [this, &config] {
    return generate_trace(config, [this](std::uint32_t done, std::uint32_t total) {
      if (stop_.load(std::memory_order_relaxed)) throw Stopped{};
      if (progress_) progress_(done, total);
    });
  });
}

TraceAhead::~TraceAhead() {
  stop_ = true;
  if (!made_.valid()) return;
  try {
    made_.get();
  } catch (...) {
    // Not taken: the set-up failed elsewhere, and says so.
  }
}

PreparedTrace TraceAhead::take() { return made_.get(); }

}  // namespace fabricsim
