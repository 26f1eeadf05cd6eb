#pragma once
// Flow completion statistics for a finished run: per message the completion time (FCT:
// acknowledgement of the last packet minus start) and its slowdown, FCT over the FCT the
// message would have alone on an idle fabric; percentiles over the workload's flows.
#include <cstdint>
#include <vector>

#include "app/scenario/scenario.h"
#include "topologies/routing.h"

namespace fabricsim {

// FCT of `bytes` from `src` to `dst` alone on the idle fabric: the first packet's
// store-and-forward time over every hop of the first routed path, the other packets at
// the rate the flow reaches alone, propagation both ways and the last acknowledgement's
// serialization back. That rate is computed over the routed DAG: where a node spreads
// packets (endpoints always; switches under spray or adaptive) the rates of its next
// hops add up, where it pins a flow (ECMP) one next hop counts; every hop is capped by
// its link. Exact for a single path of equal links (the closed form in docs/model.md)
// and for NVSwitch domains; where spread paths share a link again downstream it is an
// upper bound on the rate.
class IdleFctModel {
 public:
  struct Estimate {
    Time fct;         // completion time alone on the idle fabric
    double rate_bps;  // the rate the flow reaches alone (its bottleneck)
  };
  explicit IdleFctModel(const ScenarioRun& run);
  Estimate estimate(HostId src, HostId dst, std::int64_t bytes) const;
  Time operator()(HostId src, HostId dst, std::int64_t bytes) const { return estimate(src, dst, bytes).fct; }

 private:
  std::span<const PortIndex> next_hops(std::uint32_t node, HostId dst) const;

  const ScenarioRun* run_;
  std::vector<std::vector<Adjacent>> adj_;
  mutable std::vector<double> memo_;  // per node, reset after each estimate
  mutable std::vector<std::uint32_t> memo_used_;
};

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};
// Nearest-rank percentiles of `values` (sorted in place).
Percentiles percentiles(std::vector<double>& values);

// Flows of one size range: (previous bucket's max_bytes, max_bytes].
struct FlowSizeBucket {
  std::int64_t max_bytes = 0;  // INT64_MAX for the last
  std::size_t flows = 0;
  std::size_t finished = 0;
  Percentiles fct_us;
  Percentiles slowdown;
};

struct FlowSummary {
  std::size_t flows = 0;
  std::size_t finished = 0;
  Percentiles fct_us;
  Percentiles slowdown;
  // Mean over finished flows of goodput (payload bytes / FCT) over the rate the flow would
  // reach alone (for a host with one link: its line rate).
  double mean_throughput_fraction = 0;
  // By flow size, decade buckets as the congestion-control papers plot them: up to
  // 10 kB, 100 kB, 1 MB, 10 MB, and above; empty buckets are left out.
  std::vector<FlowSizeBucket> by_size;
};

// Over messages [first, end) of the run.
FlowSummary summarize_flows(const ScenarioRun& run, MessageId first);

}  // namespace fabricsim
