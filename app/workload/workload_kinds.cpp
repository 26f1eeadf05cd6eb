#include "app/workload/workload_kind.h"

namespace fabricsim {

// One line per kind: the function that makes it (in its own file here).
WorkloadStart make_permutation_workload(const WorkloadSetup& setup);
WorkloadStart make_incast_workload(const WorkloadSetup& setup);
WorkloadStart make_uniform_workload(const WorkloadSetup& setup);
WorkloadStart make_poisson_workload(const WorkloadSetup& setup);
WorkloadStart make_collective_workload(const WorkloadSetup& setup);
WorkloadStart make_trace_workload(const WorkloadSetup& setup);

namespace {
using K = WorkloadConfig::Kind;
const WorkloadKind kKinds[] = {
    {K::kPermutation, make_permutation_workload},
    {K::kIncast, make_incast_workload},
    {K::kUniform, make_uniform_workload},
    {K::kPoisson, make_poisson_workload},
    {K::kCollective, make_collective_workload},
    {K::kTrace, make_trace_workload},
    {K::kChakra, make_trace_workload},
};
}  // namespace

const WorkloadKind* find_workload_kind(WorkloadConfig::Kind kind) {
  for (const WorkloadKind& k : kKinds) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

}  // namespace fabricsim
