#pragma once
// One scenario from validated config to finished run: topology -> compiled network ->
// messages scheduled -> events run (with progress reports) -> state for the recorders.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "app/config.h"
#include "sim/network.h"
#include "sim/simulator.h"
#include "topologies/topology.h"
#include "workloads/message_schedule.h"

namespace fabricsim {

// Builds the topology the config describes. Throws ConfigError for topologies that
// cannot work (a host with two links, an unreachable host), pointing at `topology`.
Topology build_topology(const TopologyConfig& config);

struct Progress {
  Time sim_time;
  std::uint64_t events;
  std::size_t messages_finished;
  std::size_t messages_total;
  double wall_seconds;
};

class ScenarioRun {
 public:
  // Resolves names and builds everything; throws ConfigError on references to nothing.
  explicit ScenarioRun(ScenarioConfig config);
  ScenarioRun(const ScenarioRun&) = delete;
  ScenarioRun& operator=(const ScenarioRun&) = delete;

  // Runs to completion or to the stop limits; `progress` is called every few million
  // events (never per event), so a long run can report on a terminal.
  void run(const std::function<void(const Progress&)>& progress = {});

  const ScenarioConfig& config() const { return config_; }
  const Topology& topology() const { return topology_; }
  const Network& network() const { return *network_; }
  const Simulator& sim() const { return *sim_; }
  StopReason stop_reason() const { return stop_reason_; }
  bool complete() const;  // every message acknowledged
  std::size_t messages_finished() const;
  double wall_seconds() const { return wall_seconds_; }

 private:
  ScenarioConfig config_;
  Topology topology_;
  std::unique_ptr<Simulator> sim_;
  std::unique_ptr<Network> network_;
  std::unique_ptr<MessageSchedule> schedule_;
  StopReason stop_reason_ = StopReason::kQueueEmpty;
  double wall_seconds_ = 0;
};

}  // namespace fabricsim
