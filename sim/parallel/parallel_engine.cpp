#include "sim/parallel/parallel_engine.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "sim/parallel/spin_barrier.h"

namespace fabricsim {

namespace {
constexpr std::uint64_t kProgressEvents = 4'000'000;
// A span judged for gathering: at least this many windows and this much wall time.
constexpr std::uint64_t kGatherSpanWindows = 4;
constexpr double kGatherSpanSeconds = 0.01;
// One thread takes every partition after this many spans in a row where it would have
// been sooner (under one thread's work a wall second), or this many where it would have
// been much sooner (the machine's other work keeps the threads off their cores): a split
// starts slowly for a few tens of milliseconds (its threads placed on one core at first,
// its memory's first touches), doing about 0.7 threads' work a wall second.
constexpr int kGatherLosingSpans = 10;
constexpr double kStarvedWorkPerWall = 0.4;
constexpr int kGatherStarvedSpans = 2;
}  // namespace

ParallelEngine::ParallelEngine(Network& network, Simulator& control, int threads, ProcessGroup* group)
    : network_(&network), control_(&control), group_(group) {
  const std::size_t p = network.partition_count();
  const int processes = group != nullptr ? group->size() : 1;
  rank_ = group != nullptr ? group->rank() : 0;
  owner_.resize(p);
  std::vector<std::uint32_t> local;
  for (std::uint32_t q = 0; q < p; ++q) {
    owner_[q] = partition_owner(q, p, processes);
    if (owner_[q] == rank_) local.push_back(q);
  }
  threads = std::max(1, std::min<int>(threads, static_cast<int>(local.size())));
  stats_.partitions = p;
  stats_.processes = processes;
  stats_.threads = threads;
  stats_.lookahead = network.lookahead();
  stats_.cut_links = network.cut_link_count();
  stats_.events.assign(p, 0);
  stats_.blocked_seconds.assign(static_cast<std::size_t>(threads), 0.0);
  mine_.resize(static_cast<std::size_t>(threads));
  for (std::size_t i = 0; i < local.size(); ++i) mine_[i % static_cast<std::size_t>(threads)].push_back(local[i]);
  bound_.assign(p, kTimeMax);
  window_start_events_.assign(p, 0);
  // Monitors retire once nothing but monitors is pending: the work is in the partitions.
  if (group_ != nullptr) {
    // Anywhere, not only here: every process's monitors must decide alike.
    control.set_work_elsewhere([this] { return earliest_ != kTimeMax; });
    return;
  }
  control.set_work_elsewhere([net = network_] {
    for (std::size_t q = 0; q < net->partition_count(); ++q) {
      if (!net->partition(q).idle()) return true;
    }
    return false;
  });
}

std::uint64_t ParallelEngine::events() const {
  std::uint64_t n = control_->events_processed() - control_->monitor_events();
  if (group_ != nullptr) {
    for (std::uint64_t e : stats_.events) n += e;  // every process's, as of the last window
    return n;
  }
  // Monitors' events (failures applied in each partition) are not the run's.
  for (std::size_t q = 0; q < network_->partition_count(); ++q) {
    n += network_->partition(q).events_processed() - network_->partition(q).monitor_events();
  }
  return n;
}

Time ParallelEngine::last_event_time() const {
  // The clock starts at 0, as one simulator's does, whether or not any event ran.
  Time t = std::max<Time>(0, control_->last_event_time());
  if (group_ != nullptr) return std::max(last_time_, t);
  for (std::size_t q = 0; q < network_->partition_count(); ++q) t = std::max(t, network_->partition(q).last_event_time());
  return t;
}

void ParallelEngine::account_processes(std::uint64_t& busiest) {
  const std::size_t p = network_->partition_count();
  // Every partition's events (each process knows its own), and the window sum.
  std::vector<std::int64_t> counts(p + 1, 0);
  for (std::size_t q = 0; q < p; ++q) {
    if (owns(q)) counts[q] = static_cast<std::int64_t>(network_->partition(q).events_processed() - network_->partition(q).monitor_events());
  }
  counts[p] = window_sum_local_ ? window_sum_local_() : 0;
  group_->all_sum(counts);
  for (std::size_t q = 0; q < p; ++q) {
    const auto e = static_cast<std::uint64_t>(counts[q]);
    busiest = std::max(busiest, e - window_start_events_[q]);
    stats_.events[q] = e;
  }
  window_sum_ = counts[p];
}

void ParallelEngine::swap_packets() {
  // Packets for partitions of other processes go there as bytes; what comes back is put
  // in the sending partition's outbox (empty here: it runs elsewhere), so delivery takes
  // it in the same order as if that partition ran here.
  const std::size_t p = network_->partition_count();
  const bool telemetry = network_->partition(0).packets().telemetry_enabled();  // the same in every pool
  std::vector<Bytes> out(static_cast<std::size_t>(group_->size()));
  // First the notices of messages made for another process's endpoints (it opens their
  // receives before their packets come in), in partition order.
  std::vector<std::vector<const Network::RemoteOpen*>> notices(out.size());
  for (std::uint32_t from = 0; from < p; ++from) {
    if (!owns(from)) continue;
    for (const Network::RemoteOpen& r : network_->remote_opens(from)) {
      notices[static_cast<std::size_t>(owner_[network_->receiver_partition(r.src, r.dst)])].push_back(&r);
    }
  }
  for (std::size_t k = 0; k < out.size(); ++k) {
    put(out[k], static_cast<std::uint64_t>(notices[k].size()));
    for (const Network::RemoteOpen* r : notices[k]) put(out[k], *r);
  }
  for (std::uint32_t from = 0; from < p; ++from) {
    if (owns(from)) network_->remote_opens(from).clear();
  }
  for (std::uint32_t from = 0; from < p; ++from) {
    if (!owns(from)) continue;
    Outbox& box = network_->outbox(from);
    for (std::uint32_t to = 0; to < p; ++to) {
      std::vector<CrossPacket>& packets = box.to[to];
      if (owns(to) || packets.empty()) continue;
      Bytes& b = out[static_cast<std::size_t>(owner_[to])];
      put(b, from);
      put(b, to);
      put(b, static_cast<std::uint64_t>(packets.size()));
      for (const CrossPacket& c : packets) {
        put(b, c.arrives);
        put(b, c.link);
        put(b, c.packet);
        if (telemetry) put(b, c.telemetry);  // only when a scheme asks for INT: 132 B more
      }
      packets.clear();
    }
  }
  const std::vector<Bytes> in = group_->exchange(out);
  for (const Bytes& b : in) {
    BytesReader r(b);
    const auto opens = r.get<std::uint64_t>();
    for (std::uint64_t k = 0; k < opens; ++k) network_->open_remote(r.get<Network::RemoteOpen>());
    while (!r.done()) {
      const auto from = r.get<std::uint32_t>();
      const auto to = r.get<std::uint32_t>();
      const auto n = r.get<std::uint64_t>();
      std::vector<CrossPacket>& packets = network_->outbox(from).to[to];
      for (std::uint64_t k = 0; k < n; ++k) {
        CrossPacket& c = packets.emplace_back();
        c.arrives = r.get<Time>();
        c.link = r.get<std::uint32_t>();
        c.packet = r.get<Packet>();
        network_->resolve_remote_slot(c.packet);
        if (telemetry) c.telemetry = r.get<IntStack>();
      }
    }
  }
}

void ParallelEngine::between_windows() {
  const std::size_t p = network_->partition_count();
  if (!planning_) {
    // A window ended: account it.
    std::uint64_t busiest = 0;
    if (group_ != nullptr) {
      account_processes(busiest);
      swap_packets();
    } else {
      for (std::size_t q = 0; q < p; ++q) {
        const std::uint64_t e = network_->partition(q).events_processed();
        busiest = std::max(busiest, e - window_start_events_[q]);
        stats_.events[q] = e;
      }
    }
    stats_.critical_path_events += busiest;
    ++stats_.windows;
    if (!gathered_) maybe_gather();
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
  bool partition_stop = false;
  for (std::size_t q = 0; q < p; ++q) {
    if (!owns(q)) continue;
    earliest = std::min(earliest, bound_[q]);
    partition_stop = partition_stop || network_->partition(q).stop_requested();
  }
  if (group_ != nullptr) {
    std::vector<std::int64_t> v{earliest, partition_stop ? 0 : 1};
    group_->all_min(v);
    earliest = v[0];
    partition_stop = v[1] == 0;
  }
  earliest_ = earliest;
  for (;;) {
    const bool stop = control_->stop_requested() || partition_stop;
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
    Time lookahead = network_->lookahead();
    // One partition cuts no link, but what runs between windows (a sweep's next size, a
    // trace's launches) starts a notice (the longest link) after what it heard: no
    // window may be longer than that.
    if (lookahead == kTimeMax) lookahead = std::max<Time>(1, network_->longest_latency());
    Time end = lookahead == kTimeMax || earliest > kTimeMax - lookahead ? kTimeMax : earliest + lookahead;
    end = std::min(end, monitor);
    if (until_ < kTimeMax) end = std::min(end, until_ + 1);
    window_end_ = end;
    for (std::size_t q = 0; q < p; ++q) {
      window_start_events_[q] = group_ != nullptr ? stats_.events[q] : network_->partition(q).events_processed();
    }
    return;
  }
}

void ParallelEngine::maybe_gather() {
  if (stats_.threads <= 1) return;  // one thread holds every partition already
  if (gather_after_ > 0 && stats_.windows >= gather_after_) {
    gathered_ = true;
    stats_.gathered_at_window = stats_.windows;
    return;
  }
  if (!gather_when_waiting_) return;
  ++span_windows_;
  const auto now = std::chrono::steady_clock::now();
  const double wall = std::chrono::duration<double>(now - span_start_).count();
  if (span_windows_ < kGatherSpanWindows || wall < kGatherSpanSeconds) return;
  double waited = 0;
  for (double w : waited_) waited += w;
  const double span_waited = waited - span_waited_;
  // The first span is the threads' start: not judged.
  if (spans_++ > 0) {
    const double work = work_per_wall(static_cast<int>(waited_.size()), wall, span_waited);
    losing_spans_ = work < 1 ? losing_spans_ + 1 : 0;
    starved_spans_ = work < kStarvedWorkPerWall ? starved_spans_ + 1 : 0;
    if (losing_spans_ >= kGatherLosingSpans || starved_spans_ >= kGatherStarvedSpans) {
      gathered_ = true;
      stats_.gathered_at_window = stats_.windows;
    }
  }
  span_waited_ = waited;
  span_windows_ = 0;
  span_start_ = now;
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
  waited_.assign(static_cast<std::size_t>(threads), 0.0);
  span_waited_ = 0;
  span_windows_ = 0;
  spans_ = 0;
  losing_spans_ = 0;
  starved_spans_ = 0;
  span_start_ = std::chrono::steady_clock::now();
  // Thread 0 alone, once gathered: every local partition, in the order the threads held them.
  std::vector<std::uint32_t> all;
  for (const auto& held : mine_) all.insert(all.end(), held.begin(), held.end());
  const auto body = [&](int t) {
    double& waited = waited_[static_cast<std::size_t>(t)];
    const double waited_before = waited;
    const auto wait = [&](bool alone) {
      if (alone) {
        between_windows();
        return;
      }
      const auto t0 = std::chrono::steady_clock::now();
      sync.arrive_and_wait();
      waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    for (;;) {
      // gathered_ changes only between windows, and every thread reads it after the same barrier.
      const bool alone = gathered_;
      if (alone && t != 0) break;
      const std::vector<std::uint32_t>& held = alone ? all : mine_[static_cast<std::size_t>(t)];
      for (std::uint32_t q : held) {
        network_->deliver_cut_packets(q);
        bound_[q] = network_->partition(q).next_event_bound();
      }
      wait(alone);  // plans the window
      if (finished_) break;
      for (std::uint32_t q : held) network_->partition(q).run(window_end_ - 1);
      wait(alone);  // accounts for it
    }
    stats_.blocked_seconds[static_cast<std::size_t>(t)] += waited - waited_before;
  };
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t) others.emplace_back(body, t);
  body(0);
  for (std::thread& th : others) th.join();
  if (group_ != nullptr) {
    Time last = -1;
    for (std::size_t q = 0; q < network_->partition_count(); ++q) {
      if (owns(q)) last = std::max(last, network_->partition(q).last_event_time());
    }
    std::vector<std::int64_t> v{-last};
    group_->all_min(v);
    last_time_ = -v[0];
  } else {
    for (std::size_t q = 0; q < network_->partition_count(); ++q) stats_.events[q] = network_->partition(q).events_processed();
  }
  progress_ = nullptr;
  return reason_;
}

}  // namespace fabricsim
