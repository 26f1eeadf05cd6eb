#include "app/workload/workload_kind.h"

#include <algorithm>

namespace fabricsim {

// One line per kind: the functions that make it and estimate its memory (in its own
// file here).
WorkloadStart make_permutation_workload(const WorkloadSetup& setup);
WorkloadStart make_incast_workload(const WorkloadSetup& setup);
WorkloadStart make_uniform_workload(const WorkloadSetup& setup);
WorkloadStart make_poisson_workload(const WorkloadSetup& setup);
WorkloadStart make_collective_workload(const WorkloadSetup& setup);
WorkloadStart make_trace_workload(const WorkloadSetup& setup);
WorkloadNeeds permutation_needs(const ScenarioConfig& config, const Topology& topology);
WorkloadNeeds incast_needs(const ScenarioConfig& config, const Topology& topology);
WorkloadNeeds uniform_needs(const ScenarioConfig& config, const Topology& topology);
WorkloadNeeds poisson_needs(const ScenarioConfig& config, const Topology& topology);
WorkloadNeeds collective_needs(const ScenarioConfig& config, const Topology& topology);
WorkloadNeeds trace_needs(const ScenarioConfig& config, const Topology& topology);

namespace {
using K = WorkloadConfig::Kind;
const WorkloadKind kKinds[] = {
    {K::kPermutation, make_permutation_workload, permutation_needs},
    {K::kIncast, make_incast_workload, incast_needs},
    {K::kUniform, make_uniform_workload, uniform_needs},
    {K::kPoisson, make_poisson_workload, poisson_needs},
    {K::kCollective, make_collective_workload, collective_needs},
    {K::kTrace, make_trace_workload, trace_needs},
    {K::kChakra, make_trace_workload, trace_needs},
};
}  // namespace

std::uint64_t packets_of(const ScenarioConfig& config, std::int64_t bytes) {
  const std::int64_t mtu = config.network.nic.mtu;
  return static_cast<std::uint64_t>(std::max<std::int64_t>(1, (bytes + mtu - 1) / mtu));
}

const WorkloadKind* find_workload_kind(WorkloadConfig::Kind kind) {
  for (const WorkloadKind& k : kKinds) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

}  // namespace fabricsim
