#pragma once
// The workload kinds `workload.kind` names. Each is made by a function in its own file
// in app/workload/ and listed once in the registry (workload_kinds.cpp): it resolves its
// config section against the fabric (located errors for what does not fit) and returns
// its driver, or makes its messages before the run; a function beside it says what the
// kind adds to the memory estimate.
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "app/config/config.h"
#include "sim/network.h"
#include "topologies/routing.h"
#include "topologies/topology.h"
#include "workloads/workload_driver.h"

namespace fabricsim {

// Throughput over a window of simulated time: payload bytes delivered in it, and bytes
// of workload flows that arrived in it, both as a fraction of the endpoints' capacity.
struct LoadWindow {
  Time from = 0;
  Time to = 0;
  double target_load = 0;
  double offered_load = 0;
  double delivered_load = 0;
};

// What a kind is made from.
struct WorkloadSetup {
  const ScenarioConfig& config;
  const Topology& topology;
  Network& network;
  std::vector<HostId> placement;  // the workload's `placement` as endpoints (empty: not given)
  const RoutingProgress& trace_progress;  // a generated trace's progress
  std::function<void(Time start, MessageId id)> post;  // a message made before the run, to start at `start`
  std::function<double(HostId)> endpoint_rate_bps;    // an endpoint's line rate
};

struct WorkloadStart {
  std::unique_ptr<WorkloadDriver> driver;  // null: its messages were made before the run
  std::optional<LoadWindow> window;        // where offered and delivered load are measured
};

// What a kind adds to the memory estimate (app/scenario/memory_estimate.h), from the
// config and the built graph, before anything is spent: packets it can have in flight at
// once, messages made before the run, and the bytes of its programs or trace.
struct WorkloadNeeds {
  std::uint64_t packets = 0;
  std::uint64_t prebuilt_messages = 0;
  std::uint64_t message_bytes = 0;
};
// Packets of a message of `bytes` at the config's MTU (at least one).
std::uint64_t packets_of(const ScenarioConfig& config, std::int64_t bytes);

struct WorkloadKind {
  WorkloadConfig::Kind kind;
  WorkloadStart (*make)(const WorkloadSetup& setup);
  WorkloadNeeds (*needs)(const ScenarioConfig& config, const Topology& topology);
};

// The registry's entry for `kind` (null for kNone).
const WorkloadKind* find_workload_kind(WorkloadConfig::Kind kind);

}  // namespace fabricsim
