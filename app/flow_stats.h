#pragma once
// Flow completion statistics for a finished run: per message the completion time (FCT:
// acknowledgement of the last packet minus start) and its slowdown, FCT over the FCT the
// message would have alone on an idle fabric; percentiles over the workload's flows.
#include <cstdint>
#include <vector>

#include "app/scenario.h"
#include "topologies/routing.h"

namespace fabricsim {

// FCT of `bytes` from `src` to `dst` alone on the idle fabric, from the routed path:
// the first packet's store-and-forward time over every hop, the other packets at the
// path's bottleneck rate, propagation both ways and the last acknowledgement's
// serialization back. The bottleneck of a hop is the sum of the rates of its usable
// ports where the node spreads packets (endpoints always; switches under spray or
// adaptive) and one port's rate where it pins a flow (ECMP). Exact for a single path of
// equal links (the closed form in docs/model.md).
class IdleFctModel {
 public:
  explicit IdleFctModel(const ScenarioRun& run);
  Time operator()(HostId src, HostId dst, std::int64_t bytes) const;

 private:
  const ScenarioRun* run_;
  std::vector<RouteTable> routes_;
  std::vector<std::vector<Adjacent>> adj_;
};

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};
// Nearest-rank percentiles of `values` (sorted in place).
Percentiles percentiles(std::vector<double>& values);

struct FlowSummary {
  std::size_t flows = 0;
  std::size_t finished = 0;
  Percentiles fct_us;
  Percentiles slowdown;
  // Mean over finished flows of goodput (payload bytes / FCT) over the source's line rate.
  double mean_throughput_fraction = 0;
};

// Over messages [first, end) of the run.
FlowSummary summarize_flows(const ScenarioRun& run, MessageId first);

}  // namespace fabricsim
