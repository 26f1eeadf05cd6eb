#include "app/workload/workload_kind.h"

#include <algorithm>

namespace fabricsim {

// One line per kind: the functions that read it, make it and estimate its memory (in its
// own file here).
void read_permutation_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading& reading);
void read_incast_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading& reading);
void read_uniform_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading& reading);
void read_poisson_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading& reading);
void read_collective_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading& reading);
void read_trace_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading& reading);
void read_chakra_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading& reading);
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
const WorkloadKind kKinds[] = {
    {"permutation", read_permutation_workload, make_permutation_workload, permutation_needs},
    {"incast", read_incast_workload, make_incast_workload, incast_needs},
    {"uniform", read_uniform_workload, make_uniform_workload, uniform_needs},
    {"poisson", read_poisson_workload, make_poisson_workload, poisson_needs},
    {"collective", read_collective_workload, make_collective_workload, collective_needs},
    {"trace", read_trace_workload, make_trace_workload, trace_needs},
    {"chakra", read_chakra_workload, make_trace_workload, trace_needs},
};
}  // namespace

std::span<const WorkloadKind> workload_kinds() { return kKinds; }

std::uint64_t packets_of(const ScenarioConfig& config, std::int64_t bytes) {
  const std::int64_t mtu = config.network.nic.mtu;
  return static_cast<std::uint64_t>(std::max<std::int64_t>(1, (bytes + mtu - 1) / mtu));
}

const WorkloadKind* find_workload_kind(const std::string& kind) {
  for (const WorkloadKind& k : workload_kinds()) {
    if (kind == k.name) return &k;
  }
  return nullptr;
}

}  // namespace fabricsim
