#pragma once
// A generated training step (workload: {kind: trace, generate: ...}) needs only the
// config, not the fabric: with --threads it is made on a thread of its own while the
// fabric is built and routed, and the replay takes it once the network is there. The
// trace is the one generated in line, so nothing else changes.
#include <atomic>
#include <future>

#include "app/config/workload_config.h"
#include "topologies/routing.h"
#include "workloads/traces/replay_program.h"

namespace fabricsim {

// The step `fabricsim workload gen` would write, made in memory and taken into the
// replay's program rank by rank as it is made; the model and GPU files that cannot be
// read are config errors at their keys (app/workload/trace_workload.cpp).
PreparedTrace generate_trace(const TraceWorkloadConfig& config, const RoutingProgress& progress);

class TraceAhead {
 public:
  // Starts making `config`'s step (which must outlive this) now, telling `progress`.
  TraceAhead(const TraceWorkloadConfig& config, RoutingProgress progress);
  TraceAhead(const TraceAhead&) = delete;
  TraceAhead& operator=(const TraceAhead&) = delete;
  // Where the set-up stopped before taking it (a config error elsewhere): stops it at the
  // next replica and waits.
  ~TraceAhead();
  // Waits for it; throws what generating it threw. Once.
  PreparedTrace take();

 private:
  std::atomic<bool> stop_{false};
  RoutingProgress progress_;
  std::future<PreparedTrace> made_;
};

}  // namespace fabricsim
