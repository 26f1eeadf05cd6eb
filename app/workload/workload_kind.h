#pragma once
// The workload kinds `workload.kind` names. Each lives in its own file in app/workload/
// and is listed once in the registry (workload_kinds.cpp), with three functions: one
// reads its keys of the `workload` section (located errors for what is malformed), one
// resolves them against the fabric and returns its driver, or makes its messages before
// the run, and one says what the kind adds to the memory estimate.
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "app/config/config.h"
#include "app/config/yaml_reader.h"
#include "app/workload/setup_note.h"
#include "sim/network.h"
#include "topologies/routing.h"
#include "topologies/topology.h"
#include "workloads/traces/replay_program.h"
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
  // A generated trace made already, or being made, on a thread of its own (app/workload/
  // trace_ahead.h); unset: the kind generates it.
  std::function<PreparedTrace()> generated_trace;
  const SetupNote& setup_note;  // told as a long step of the kind's set-up ends
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

// What a kind's reader needs from the rest of the config, read before the workload.
struct WorkloadReading {
  int traffic_classes;
  std::int64_t mtu;  // a message's packets must number at most 2^32 - 1
};

struct WorkloadKind {
  const char* name;  // as `workload.kind` gives it
  // Reads the kind's own keys into `w` (`kind`, `start` and `traffic_class` are read).
  void (*read)(MapReader& m, WorkloadConfig& w, const WorkloadReading& reading);
  WorkloadStart (*make)(const WorkloadSetup& setup);
  WorkloadNeeds (*needs)(const ScenarioConfig& config, const Topology& topology);
};

std::span<const WorkloadKind> workload_kinds();
// The registry's entry for `kind` (null for none).
const WorkloadKind* find_workload_kind(const std::string& kind);

}  // namespace fabricsim
