#include "app/scenario/setup_threads.h"

#include <algorithm>

namespace fabricsim {

int setup_threads(const ScenarioConfig& config, const MemoryEstimate& estimate, unsigned cores) {
  if (config.threads > 0) return config.threads;
  if (config.network.fidelity != NetworkConfig::Fidelity::kFlow || config.processes != nullptr ||
      estimate.total() < kLargeFlowSetup) {
    return 1;
  }
  return static_cast<int>(std::clamp(cores, 1u, 16u));
}

}  // namespace fabricsim
