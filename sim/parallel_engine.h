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
// order in each partition (sim/event_queue.h), so a run is the same for any number of
// partitions or threads.
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/network.h"
#include "sim/simulator.h"

namespace fabricsim {

struct ParallelStats {
  std::size_t partitions = 0;
  int threads = 0;
  Time lookahead = kTimeMax;
  std::size_t cut_links = 0;
  std::uint64_t windows = 0;                  // synchronisation rounds
  std::vector<std::uint64_t> events;          // per partition
  std::vector<double> blocked_seconds;        // per thread: waiting for the others
  std::uint64_t critical_path_events = 0;     // sum over windows of the busiest partition's events
};

class ParallelEngine {
 public:
  // `control` is the monitors' clock (the network's own simulator, which runs no
  // component once the network is split); partition q runs on thread q mod `threads`.
  ParallelEngine(Network& network, Simulator& control, int threads);

  // Runs every event due at or before `until`, or until a monitor stops the run.
  // `progress` is called between windows, about every few million events.
  StopReason run(Time until, const std::function<void()>& progress = {});

  // Called after every window, on one thread while every partition is stopped (for
  // recorders that merge what the partitions gathered).
  void set_window_hook(std::function<void()> hook) { window_hook_ = std::move(hook); }

  const ParallelStats& stats() const { return stats_; }
  std::uint64_t events() const;  // run so far, monitors' not included
  Time last_event_time() const;

 private:
  void between_windows();  // runs on one thread while the others wait

  Network* network_;
  Simulator* control_;
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
};

}  // namespace fabricsim
