#include "sim/parallel_engine.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "sim/spin_barrier.h"

namespace fabricsim {

namespace {
constexpr std::uint64_t kProgressEvents = 4'000'000;
}

ParallelEngine::ParallelEngine(Network& network, Simulator& control, int threads)
    : network_(&network), control_(&control) {
  const std::size_t p = network.partition_count();
  threads = std::max(1, std::min<int>(threads, static_cast<int>(p)));
  stats_.partitions = p;
  stats_.threads = threads;
  stats_.lookahead = network.lookahead();
  stats_.cut_links = network.cut_link_count();
  stats_.events.assign(p, 0);
  stats_.blocked_seconds.assign(static_cast<std::size_t>(threads), 0.0);
  mine_.resize(static_cast<std::size_t>(threads));
  for (std::uint32_t q = 0; q < p; ++q) mine_[q % static_cast<std::uint32_t>(threads)].push_back(q);
  bound_.assign(p, kTimeMax);
  window_start_events_.assign(p, 0);
  // Monitors retire once nothing but monitors is pending: the work is in the partitions.
  control.set_work_elsewhere([net = network_] {
    for (std::size_t q = 0; q < net->partition_count(); ++q) {
      if (!net->partition(q).idle()) return true;
    }
    return false;
  });
}

std::uint64_t ParallelEngine::events() const {
  std::uint64_t n = control_->events_processed() - control_->monitor_events();
  for (std::size_t q = 0; q < network_->partition_count(); ++q) n += network_->partition(q).events_processed();
  return n;
}

Time ParallelEngine::last_event_time() const {
  Time t = control_->last_event_time();
  for (std::size_t q = 0; q < network_->partition_count(); ++q) t = std::max(t, network_->partition(q).last_event_time());
  return t;
}

void ParallelEngine::between_windows() {
  const std::size_t p = network_->partition_count();
  if (!planning_) {
    // A window ended: account it.
    std::uint64_t busiest = 0;
    for (std::size_t q = 0; q < p; ++q) {
      const std::uint64_t e = network_->partition(q).events_processed();
      busiest = std::max(busiest, e - window_start_events_[q]);
      stats_.events[q] = e;
    }
    stats_.critical_path_events += busiest;
    ++stats_.windows;
    if (window_hook_) window_hook_();
    if (progress_ && *progress_ && events() >= next_progress_) {
      (*progress_)();
      next_progress_ = events() + kProgressEvents;
    }
    planning_ = true;
    return;
  }
  planning_ = false;
  Time earliest = kTimeMax;
  for (std::size_t q = 0; q < p; ++q) earliest = std::min(earliest, bound_[q]);
  for (;;) {
    bool stop = control_->stop_requested();
    for (std::size_t q = 0; q < p; ++q) stop = stop || network_->partition(q).stop_requested();
    if (stop) {
      finished_ = true;
      reason_ = StopReason::kRequested;
      return;
    }
    const Time monitor = control_->next_event_bound();
    const Time next = std::min(earliest, monitor);
    if (next == kTimeMax) {
      finished_ = true;
      reason_ = StopReason::kQueueEmpty;
      return;
    }
    if (next > until_) {
      finished_ = true;
      reason_ = StopReason::kTimeLimit;
      return;
    }
    if (monitor <= earliest) {
      // Every event before the monitor's time is done, none at it: its turn.
      control_->run(monitor);
      continue;
    }
    const Time lookahead = network_->lookahead();
    Time end = lookahead == kTimeMax || earliest > kTimeMax - lookahead ? kTimeMax : earliest + lookahead;
    end = std::min(end, monitor);
    if (until_ < kTimeMax) end = std::min(end, until_ + 1);
    window_end_ = end;
    for (std::size_t q = 0; q < p; ++q) window_start_events_[q] = network_->partition(q).events_processed();
    return;
  }
}

StopReason ParallelEngine::run(Time until, const std::function<void()>& progress) {
  until_ = until;
  finished_ = false;
  planning_ = true;
  progress_ = &progress;
  next_progress_ = events() + kProgressEvents;
  const int threads = stats_.threads;
  auto completion = [this]() noexcept { between_windows(); };
  SpinBarrier sync(threads, completion);
  const auto body = [&](int t) {
    double blocked = 0;
    const auto wait = [&] {
      const auto t0 = std::chrono::steady_clock::now();
      sync.arrive_and_wait();
      blocked += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    for (;;) {
      for (std::uint32_t q : mine_[static_cast<std::size_t>(t)]) {
        network_->deliver_cut_packets(q);
        bound_[q] = network_->partition(q).next_event_bound();
      }
      wait();  // plans the window
      if (finished_) break;
      for (std::uint32_t q : mine_[static_cast<std::size_t>(t)]) network_->partition(q).run(window_end_ - 1);
      wait();  // accounts for it
    }
    stats_.blocked_seconds[static_cast<std::size_t>(t)] += blocked;
  };
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t) others.emplace_back(body, t);
  body(0);
  for (std::thread& th : others) th.join();
  for (std::size_t q = 0; q < network_->partition_count(); ++q) stats_.events[q] = network_->partition(q).events_processed();
  progress_ = nullptr;
  return reason_;
}

}  // namespace fabricsim
