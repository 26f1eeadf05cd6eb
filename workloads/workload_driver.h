#pragma once
// A workload at run time, whatever its kind (ASTRA-sim's workload layer): it puts
// messages or its ranks' agents on the network before the first event, and keeps what
// it measured for the writers. The scenario treats every driver alike: it starts them,
// attaches a timeline's listener, calls them between a split run's windows, and asks
// whether they are done. Each kind is made from its config section by its own file in
// app/workload/, chosen by name from the registry there.
#include "sim/core/activity.h"
#include "sim/core/time.h"
#include "sim/parallel/process_group.h"

namespace fabricsim {

class WorkloadDriver {
 public:
  virtual ~WorkloadDriver() = default;
  // Its first messages or agents, at `at` (a time not yet run). `split`: the run is split
  // over threads or processes, and between_windows() will be called.
  virtual void start(Time at, bool split) = 0;
  // Told of what its ranks do as they finish it (timelines); set before start().
  virtual void set_activity_listener(ActivityListener* listener) = 0;
  // A split run, every partition stopped between two windows; over MPI processes
  // (`group`) every process calls it after every window.
  virtual void between_windows(ProcessGroup* group) = 0;
  // Every part of it has finished.
  virtual bool done() const = 0;
};

}  // namespace fabricsim
