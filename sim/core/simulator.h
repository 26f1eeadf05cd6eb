#pragma once
// One simulation: its clock, event queue, packet pool, egress queues' slot blocks and
// random numbers. Nothing is global, so two Simulators can run side by side in one
// process.
#include <cstdint>
#include <functional>

#include "sim/core/event_queue.h"
#include "sim/core/packet_pool.h"
#include "sim/core/rng.h"
#include "sim/core/slot_blocks.h"
#include "sim/core/time.h"

namespace fabricsim {

enum class StopReason { kQueueEmpty, kTimeLimit, kEventLimit, kRequested, kNoProgress };

// Aligned to a cache line: the partitions of a split run are Simulators side by side on
// the heap, each written by its own thread on every event (its clock, its counts, its
// packet pool), and one sharing a line with the next cost a Llama step on two threads 12%.
class alignas(64) Simulator {
 public:
  explicit Simulator(std::uint64_t seed) : rng_(seed) {}
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Time now() const { return now_; }
  // The time of the last event run (-1 before any): a time limit moves now() past it.
  Time last_event_time() const { return last_event_; }
  // The time of the last event that was not a monitor's (-1 before any): where the run
  // ends, however long its monitors kept watching after it.
  Time last_work_time() const { return last_work_; }
  std::uint64_t monitor_events() const { return monitor_events_; }  // of events_processed()
  std::uint64_t events_processed() const { return events_; }

  void schedule_at(EventHandler& h, Time at) {
    if (at < now_) [[unlikely]] scheduled_in_the_past();
    queue_.schedule(h, at);
  }
  void schedule_in(EventHandler& h, Time delay) { schedule_at(h, now_ + delay); }
  void cancel(EventHandler& h) { queue_.cancel(h); }

  // Runs events due at or before `until`, at most `max_events` of them. On a time limit
  // the clock is left at `until`; otherwise at the last event run.
  StopReason run(Time until = kTimeMax, std::uint64_t max_events = UINT64_MAX);

  // As run(), telling `seen` of each handler before its event: slow, for diagnosing a run
  // that stopped making progress (which components keep the queue busy), never the run.
  StopReason run_observed(Time until, std::uint64_t max_events, const std::function<void(const EventHandler&)>& seen);

  // Ends the current run() after the event being handled (e.g. a deadlock was found).
  void request_stop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }

  // Monitors (deadlock checks, samplers) run periodically but must not keep a finished
  // simulation alive: each registers once, and while handling its event asks whether
  // anything but the other monitors is still pending; if not, it retires.
  void register_monitor() { ++monitors_; }
  void retire_monitor() { --monitors_; }
  bool work_pending() const { return queue_.size() + 1 > monitors_ || (work_elsewhere_ && work_elsewhere_()); }
  // In a split run the monitors sit on a clock of their own, and the work is in the
  // partitions: this tells them whether any is left.
  void set_work_elsewhere(std::function<bool()> f) { work_elsewhere_ = std::move(f); }
  // No event is due before this (kTimeMax when none is pending); nothing moves.
  Time next_event_bound() { return queue_.lower_bound_time(); }

  bool idle() const { return queue_.empty(); }
  std::size_t pending_events() const { return queue_.size(); }
  PacketPool& packets() { return packets_; }
  const PacketPool& packets() const { return packets_; }
  SlotBlockPool& slot_blocks() { return slot_blocks_; }  // egress queues' slots
  Rng& rng() { return rng_; }

 private:
  [[noreturn]] static void scheduled_in_the_past();
  template <class Seen>
  StopReason run_loop(Time until, std::uint64_t max_events, Seen&& seen);
  Time now_ = 0;
  Time last_event_ = -1;
  Time last_work_ = -1;
  std::uint64_t monitor_events_ = 0;
  std::uint64_t events_ = 0;
  std::function<bool()> work_elsewhere_;
  bool stop_requested_ = false;
  std::size_t monitors_ = 0;
  EventQueue queue_;
  PacketPool packets_;
  SlotBlockPool slot_blocks_;
  Rng rng_;
};

}  // namespace fabricsim
