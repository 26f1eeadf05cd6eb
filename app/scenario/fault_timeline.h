#pragma once
// Failures during the run (config `faults` with `at`): at each failure the failed cables'
// ports go down (they drop what they send, releasing buffers and credits); at each
// detection every switch and endpoint takes routes computed before the run without the
// links failed so far. A control plane acting on the data plane at set times: a monitor
// on the run's clock arms one applier per partition (order key 2, a picosecond ahead),
// so every partition applies a change in round 0 of its time, for any split. It does not
// keep a finished run going.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "app/config/config.h"
#include "sim/network.h"
#include "sim/core/simulator.h"
#include "topologies/faults.h"
#include "topologies/routing.h"
#include "topologies/topology.h"

namespace fabricsim {

class FaultTimeline final : public EventHandler {
 public:
  // Works out every change before the run and appends each failed link to `applied`.
  // Null where the config has no failure during the run. Throws ConfigError, located at
  // the fault, for a failure that cuts the fabric or one asked for at flow fidelity.
  static std::unique_ptr<FaultTimeline> prepare(const ScenarioConfig& config, const Topology& topology, Network& network,
                                                std::vector<AppliedFault>& applied);

  // Before the run: `clock` watches it (the simulator of an unsplit run; a split run's
  // monitors' clock).
  void start(Simulator& clock);
  void on_event() override;

 private:
  struct Action {
    Time time;
    std::vector<std::size_t> links;        // to take down (topology link indices)
    std::shared_ptr<const Routes> routes;  // or routes to install
  };
  // Applies the armed actions to what one partition runs.
  struct Applier final : EventHandler {
    FaultTimeline* timeline = nullptr;
    std::uint32_t partition = 0;
    std::size_t first = 0, last = 0;
    void on_event() override;
  };

  FaultTimeline(const Topology& topology, Network& network, std::vector<Action> actions);
  void arm();  // the actions due at the next failure time, for every partition
  void monitor_at(Time t);

  const Topology* topology_;
  Network* network_;
  Simulator* clock_ = nullptr;
  std::vector<Action> actions_;  // by time
  std::size_t first_ = 0, next_ = 0;  // the actions armed last: [first_, next_)
  std::deque<Applier> appliers_;
};

}  // namespace fabricsim
