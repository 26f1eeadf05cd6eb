// A collective swept over sizes, as nccl-tests runs it (app/workload/collective_sweep.h).
#include "app/workload/collective_sweep.h"
#include "app/workload/workload_kind.h"

namespace fabricsim {

WorkloadStart make_collective_workload(const WorkloadSetup& s) {
  WorkloadStart start;
  start.driver = std::make_unique<CollectiveSweep>(s.network, s.topology, s.config, s.placement);
  return start;
}

}  // namespace fabricsim
