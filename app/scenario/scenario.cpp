#include "app/scenario/scenario.h"

#include "app/workload/tuner_facts.h"
#include "app/scenario/huge_pages.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include <filesystem>
#include <stdexcept>

#include "app/config/config_error.h"
#include "sim/parallel/process_group.h"
#include "topologies/partition.h"
#include "topologies/analysis.h"
#include "topologies/cluster.h"
#include "topologies/compile.h"
#include "topologies/faults.h"
#include "sim/core/rng.h"
#include "workloads/traffic/flow_size_cdf.h"
#include "workloads/traffic/synthetic_traffic.h"
#include "workloads/traces/chakra/chakra_import.h"
#include "workloads/traces/trace.h"
#include "workloads/traces/transformer_trace.h"
#include "app/config/model_files.h"

namespace fabricsim {

void ScenarioRun::schedule_message(Time start, MessageId id) {
  const HostId src = network_->messages()[id].src;
  auto& s = schedules_[src];
  if (!s) s = std::make_unique<MessageSchedule>(*network_, network_->partition(network_->host_partition(src)));
  s->add(start, id);
}

std::uint64_t ScenarioRun::events() const {
  if (engine_) return engine_->events();
  return sim_->events_processed() - sim_->monitor_events();  // the run's, not its observers'
}

Time ScenarioRun::sim_time() const {
  if (!engine_) {
    // Run out of events: it ended with its last piece of work, not its monitors' last look.
    if (stop_reason_ == StopReason::kQueueEmpty && sim_->last_work_time() >= 0) return sim_->last_work_time();
    return sim_->now();
  }
  if (stop_reason_ == StopReason::kTimeLimit) return time_limit_reached_;
  if (stop_reason_ == StopReason::kQueueEmpty && config_.processes != nullptr) {
    if (split_last_work_ >= 0) return split_last_work_;
  } else if (stop_reason_ == StopReason::kQueueEmpty) {
    // The partitions run the work; the monitors watch from a clock of their own.
    Time last = -1;
    for (const auto& p : partitions_) last = std::max(last, p->last_work_time());
    if (last >= 0) return last;
  }
  return engine_->last_event_time();
}

void ScenarioRun::set_activity_listener(ActivityListener* listener) {
  for (auto& driver : drivers_) driver->set_activity_listener(listener);
}

void ScenarioRun::add_monitor(EventHandler& monitor, std::uint32_t order, Time first) {
  monitor.set_order(order);
  sim_->register_monitor();
  sim_->schedule_at(monitor, first);
}

void ScenarioRun::QueueSampler::on_event() {
  const auto& dirs = run->network_->directions();
  for (std::size_t i = 0; i < dirs.size(); ++i) run->queue_samples_[i].push_back(dirs[i].port->queued_bytes());
  if (run->sim_->work_pending()) {
    run->sim_->schedule_in(*this, run->config_.network.lossless.queue_sample_interval);
  } else {
    run->sim_->retire_monitor();
  }
}

double ScenarioRun::endpoint_rate_bps(HostId h) const {
  double rate = 0;
  const std::uint32_t node = topology_.host_node(h);
  for (const TopologyLink& l : topology_.links()) {
    if (l.a == node || l.b == node) rate += static_cast<double>(l.bandwidth.bits_per_second);
  }
  return rate;
}

std::uint64_t ScenarioRun::delivered_payload() const {
  if (flow_model_) return flow_model_->payload_delivered();
  std::uint64_t total = 0;
  for (HostId h = 0; h < network_->host_count(); ++h) total += network_->nic(h).counters().payload_bytes_received;
  if (config_.processes != nullptr && engine_) {
    // Mid-run, each process has counted its own NICs (the others' are idle here).
    std::vector<std::int64_t> v{static_cast<std::int64_t>(total)};
    config_.processes->all_sum(v);
    total = static_cast<std::uint64_t>(v[0]);
  }
  return total;
}

void ScenarioRun::run(const std::function<void(const Progress&)>& progress) {
  // Events between progress reports (and the watchdog's checks): 4 M at most, fewer
  // where events are slow (a flow-level solve over 100,000 flows is milliseconds), so a
  // chunk takes about a second: starting small, doubled while chunks are quick and halved
  // while slow. Where a chunk ends does not change the run.
  constexpr std::uint64_t kChunk = 4'000'000;
  constexpr std::uint64_t kLeastChunk = 16;
  std::uint64_t chunk_events = kFirstProgressEvents;
  const auto t0 = std::chrono::steady_clock::now();
  // The fabric is built: at scale its state goes onto huge pages (see huge_pages.h), and
  // what the run adds to it as it goes (queues grow, the packet pool's neighbours), read
  // in no order at scale. Only ranges nine tenths in use: an allocator that maps its
  // spans ahead of use (mimalloc's segments) leaves ranges partly touched, and collapsing
  // those would fill them (docs/performance.md).
  constexpr double kMinResident = 0.9;
  // A flow-level run is one thread: the others it was given copy pages aside.
  HugePageKeeper huge_pages(kHugePageHeap, kMinResident, !engine_ && setup_threads_ > 1);
  huge_pages.keep();
  // A pass scans the heap's mappings: after 4 M events or 2 s, whichever comes first.
  std::uint64_t kept_at_events = 0;
  double kept_at_seconds = 0;
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const auto keep_on_huge_pages = [&](std::uint64_t events) {
    const double now = elapsed();
    if (events - kept_at_events < kChunk && now - kept_at_seconds < 2.0) return;
    kept_at_events = events;
    kept_at_seconds = now;
    huge_pages.keep();
  };
  // Runs until `until` (or the stop limits), reporting progress between chunks; false
  // once the run is over for good.
  // Between chunks, the watchdog: a run whose time or deliveries stopped moving is stopped
  // with a diagnosis (exit 4) instead of spinning for ever.
  ProgressWatchdog watchdog(config_.stop.frozen_events, config_.stop.undelivered_events);
  const auto stalled = [&](Time now, std::uint64_t events) {
    return watchdog.check(now, events, delivered_payload(), messages_waiting() > 0);
  };
  const auto run_serial = [&](Time until) {
    for (;;) {
      const std::uint64_t done = sim_->events_processed();
      const std::uint64_t left = config_.stop.events - std::min(done, config_.stop.events);
      const std::uint64_t chunk = std::min(left, watchdog.check_every(chunk_events));
      const double chunk_began = elapsed();
      stop_reason_ = sim_->run(std::min(until, config_.stop.time), chunk);
      const double took = elapsed() - chunk_began;
      if (took < 0.5) {
        chunk_events = std::min(kChunk, 2 * chunk_events);
      } else if (took > 2.0) {
        chunk_events = std::max(kLeastChunk, chunk_events / 2);
      }
      if (stop_reason_ != StopReason::kEventLimit) break;
      if (chunk == left) return false;
      if (const auto stall = stalled(sim_->now(), sim_->events_processed())) {
        const std::uint64_t left_now = config_.stop.events - std::min(sim_->events_processed(), config_.stop.events);
        const std::optional<StopReason> moved = diagnose_no_progress(*stall, std::min(until, config_.stop.time), left_now);
        if (!moved) {
          stop_reason_ = StopReason::kNoProgress;
          return false;
        }
        stop_reason_ = *moved;
        if (stop_reason_ != StopReason::kEventLimit) break;
      }
      keep_on_huge_pages(sim_->events_processed());
      if (progress) {
        progress({sim_->now(), sim_->events_processed(), messages_finished(), network_->messages().created(), elapsed()});
      }
    }
    return stop_reason_ == StopReason::kTimeLimit && sim_->now() < config_.stop.time;
  };
  // The same over a split run's partitions (its engine reports progress between windows).
  const std::function<void()> report = [&] {
    keep_on_huge_pages(engine_->events());  // (between windows: the other threads wait)
    if (!no_progress_) {
      if (const auto stall = stalled(engine_->last_event_time(), engine_->events())) {
        (void)diagnose_no_progress(*stall, kTimeMax, 0);  // (not watched: confirmed)
        sim_->request_stop();  // the engine stops before the next window
      }
    }
    const std::size_t finished = config_.processes != nullptr ? static_cast<std::size_t>(engine_->window_sum()) : messages_finished();
    if (progress) progress({engine_->last_event_time(), engine_->events(), finished, network_->messages().created(), elapsed()});
  };
  const auto run_split = [&](Time until) {
    const Time limit = std::min(until, config_.stop.time);
    stop_reason_ = engine_->run(limit, report);
    if (no_progress_) stop_reason_ = StopReason::kNoProgress;
    if (stop_reason_ == StopReason::kTimeLimit) time_limit_reached_ = limit;
    return stop_reason_ == StopReason::kTimeLimit && limit < config_.stop.time;
  };
  const std::function<bool(Time)> run_until = engine_ ? std::function<bool(Time)>(run_split) : std::function<bool(Time)>(run_serial);
  if (window_) {
    std::uint64_t at_from = 0;
    if (run_until(window_->from)) {
      at_from = delivered_payload();
      if (run_until(window_->to)) {
        double capacity = 0;
        for (HostId h = 0; h < network_->host_count(); ++h) capacity += endpoint_rate_bps(h);
        window_->delivered_load = static_cast<double>(delivered_payload() - at_from) * 8 /
                                  (capacity * to_seconds(window_->to - window_->from));
      }
    }
  }
  run_until(kTimeMax);
  if (config_.processes != nullptr && engine_) gather_processes();
  wall_seconds_ = elapsed();
}

std::uint64_t ScenarioRun::messages_created() const {
  return created_total_ > 0 ? created_total_ : network_->messages().created();
}

std::size_t ScenarioRun::local_messages_finished() const {
  std::size_t n = 0;
  for (HostId h = 0; h < network_->host_count(); ++h) n += network_->nic(h).counters().messages_finished;
  return n;
}

std::size_t ScenarioRun::messages_finished() const {
  if (flow_model_) return flow_model_->flows_finished();
  std::size_t n = 0;
  for (HostId h = 0; h < network_->host_count(); ++h) n += network_->nic(h).counters().messages_finished;
  return n;
}

bool ScenarioRun::complete() const {
  for (const auto& driver : drivers_) {
    if (!driver->done()) return false;
  }
  return messages_finished() == messages_created();
}

}  // namespace fabricsim
