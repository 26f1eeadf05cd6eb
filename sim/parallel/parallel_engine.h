#pragma once
// Runs a split network (Network::set_partitions) on threads, in windows of simulated
// time: conservative synchronisation in YAWNS's manner. Between windows every partition
// takes the packets sent to it, and the next window starts at the earliest pending
// event anywhere, T, and ends before T + lookahead (the smallest latency of a cut
// link): nothing sent in a window can arrive in it, so partitions run it without
// hearing from each other. Monitors (deadlock checks, samplers) live on a control clock
// of their own and run between windows, at their times, with every partition stopped:
// they see what a single queue shows them, since they run first at their time
// (order key 0), before any other event of it. Events run in (time, round, order key)
// order in each partition (sim/core/event_queue.h), so a run is the same for any number of
// partitions or threads.
//
// Over several processes (MPI ranks: a ProcessGroup), each process builds the whole
// network and runs the partitions it owns (a contiguous block, partition_owner()); between
// windows the processes swap the packets their partitions sent each other's and agree on
// the next window (the earliest event anywhere, any stop). Monitors run on every process
// at the same times, and combine what each process sees (sim/net/deadlock_detector.h).
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/network.h"
#include "sim/parallel/process_group.h"
#include "sim/core/simulator.h"

namespace fabricsim {

// The process that runs partition q of `partitions` when `processes` share them.
inline int partition_owner(std::size_t q, std::size_t partitions, int processes) {
  return static_cast<int>(q * static_cast<std::size_t>(processes) / partitions);
}

struct ParallelStats {
  std::size_t partitions = 0;
  int processes = 1;
  int threads = 0;
  Time lookahead = kTimeMax;
  std::size_t cut_links = 0;
  std::uint64_t windows = 0;                  // synchronisation rounds
  std::vector<std::uint64_t> events;          // per partition
  std::vector<double> blocked_seconds;        // per thread of this process: waiting for the others
  std::uint64_t critical_path_events = 0;     // sum over windows of the busiest partition's events
  std::uint64_t gathered_at_window = 0;       // windows run before one thread took every partition (0: never)
};

// How many threads' worth of work a split did per second of a span of windows: its
// threads worked threads x wall - waited seconds in all (waited: every thread's time at
// the barrier). Under 1, one thread would have done the same work sooner.
inline double work_per_wall(int threads, double wall_seconds, double waited_seconds) {
  return (static_cast<double>(threads) * wall_seconds - waited_seconds) / wall_seconds;
}

class ParallelEngine {
 public:
  // `control` is the monitors' clock (the network's own simulator, which runs no
  // component once the network is split); partition q runs on thread q mod `threads`.
  // `group`, when given, shares the partitions among processes, and this one runs its
  // own block on `threads` threads.
  ParallelEngine(Network& network, Simulator& control, int threads, ProcessGroup* group = nullptr);

  // Runs every event due at or before `until`, or until a monitor stops the run.
  // `progress` is called between windows, about every few million events.
  StopReason run(Time until, const std::function<void()>& progress = {});

  // Called after every window, on one thread while every partition is stopped (for
  // recorders that merge what the partitions gathered).
  void set_window_hook(std::function<void()> hook) { window_hook_ = std::move(hook); }

  const ParallelStats& stats() const { return stats_; }
  std::uint64_t events() const;  // run so far, monitors' not included (every process's)
  Time last_event_time() const;  // every process's, once run() is back; 0 before any event
  bool owns(std::size_t q) const { return owner_[q] == rank_; }
  // Over processes: `local()` summed over every process after each window (e.g. messages
  // finished, for progress); window_sum() is the latest total.
  void set_window_sum(std::function<std::int64_t()> local) { window_sum_local_ = std::move(local); }
  std::int64_t window_sum() const { return window_sum_; }
  // A split the run chose itself: once its threads together spend less time working than
  // the windows take (the machine's other work keeps them from their cores, or the windows
  // hold too little), one thread runs every partition from the next window on. The results
  // stay the same (a partition runs alike on any thread); only the wall time changes.
  // Threads of one process only.
  void set_gather_when_waiting(bool on) { gather_when_waiting_ = on && group_ == nullptr; }
  // One thread takes every partition after `windows` windows, whatever the timing (tests).
  void gather_after(std::uint64_t windows) { gather_after_ = group_ == nullptr ? windows : 0; }

 private:
  void between_windows();  // runs on one thread while the others wait
  void maybe_gather();     // between windows: whether one thread should take every partition
  void account_processes(std::uint64_t& busiest);  // a window's events, over processes
  void swap_packets();  // what local partitions sent remote ones, and back

  Network* network_;
  Simulator* control_;
  ProcessGroup* group_ = nullptr;
  int rank_ = 0;
  std::vector<int> owner_;  // per partition: its process
  Time earliest_ = kTimeMax;  // the window being planned: the earliest event anywhere
  Time last_time_ = -1;       // over processes, once run() is back
  std::function<std::int64_t()> window_sum_local_;
  std::int64_t window_sum_ = 0;
  ParallelStats stats_;
  std::vector<std::vector<std::uint32_t>> mine_;  // per thread: its partitions
  std::vector<Time> bound_;                       // per partition: no event earlier
  std::vector<std::uint64_t> window_start_events_;
  // Set between windows, read by every thread after the barrier.
  bool planning_ = true;  // the barrier's next completion plans a window (else accounts one)
  bool finished_ = false;
  Time until_ = kTimeMax;
  Time window_end_ = 0;
  StopReason reason_ = StopReason::kQueueEmpty;
  const std::function<void()>* progress_ = nullptr;
  std::function<void()> window_hook_;
  std::uint64_t next_progress_ = 0;
  // One thread for every partition (set_gather_when_waiting): the threads' waiting so far,
  // each written by its own thread before the barrier, and the span being judged.
  bool gather_when_waiting_ = false;
  std::uint64_t gather_after_ = 0;
  bool gathered_ = false;
  std::vector<double> waited_;
  double span_waited_ = 0;
  std::uint64_t span_windows_ = 0;
  int spans_ = 0;         // spans seen so far (the first is not judged)
  int losing_spans_ = 0;  // in a row, where one thread would have been sooner
  int starved_spans_ = 0;  // in a row, where it would have been much sooner
  std::chrono::steady_clock::time_point span_start_;
};

}  // namespace fabricsim
