#pragma once
// PFC deadlock detection. Every `interval` it checks whether any packet moved; if none
// did while packets wait, it builds the wait-for graph of blocked egress queues (paused
// by PFC, with packets of the paused class): a queue at switch S toward neighbour D
// waits for D's blocked queues, since D's full ingress buffer drains only through them.
// A cycle is a deadlock: the detector records it and stops the run.
#include <string>
#include <vector>

#include "sim/core/event_queue.h"
#include "sim/network.h"
#include "sim/parallel/process_group.h"

namespace fabricsim {

class DeadlockDetector final : public EventHandler {
 public:
  // It runs first at its time (order key 0), so it sees every earlier event done and
  // none of its own time: what a check between windows of a split run sees.
  DeadlockDetector(Network& network, Time interval) : network_(&network), interval_(interval) { set_order(0); }

  // A run split over processes: each sees its own partitions' ports (the others' stay
  // idle here) and the check combines them, so every process finds the same cycle.
  void set_process_group(ProcessGroup* group) { group_ = group; }

  // Starts the periodic check (it stops itself when nothing else is pending).
  void start();
  void on_event() override;

  bool deadlocked() const { return !cycle_.empty(); }
  // The cycle as (switch, egress port) hops, each waiting on the next.
  const std::vector<std::pair<std::uint32_t, PortIndex>>& cycle() const { return cycle_; }
  Time detected_at() const { return detected_at_; }

 private:
  std::uint64_t packets_moved() const;
  bool anything_waiting() const;
  bool find_cycle();

  Network* network_;
  ProcessGroup* group_ = nullptr;
  Time interval_;
  std::uint64_t last_moved_ = 0;
  std::vector<std::pair<std::uint32_t, PortIndex>> cycle_;
  Time detected_at_ = -1;
};

}  // namespace fabricsim
