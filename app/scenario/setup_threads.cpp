#include "app/scenario/setup_threads.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

namespace fabricsim {

int setup_threads(const ScenarioConfig& config, const MemoryEstimate& estimate, unsigned cores) {
  if (config.threads > 0) return config.threads;
  if (config.network.fidelity != NetworkConfig::Fidelity::kFlow || config.processes != nullptr ||
      estimate.total() < kLargeFlowSetup) {
    return 1;
  }
  return static_cast<int>(std::clamp(cores, 1u, 16u));
}

int split_threads(const ScenarioConfig& config, std::size_t hosts, Time longest_link, bool splittable, unsigned cores) {
  if (config.threads > 0) return config.threads;
  if (config.network.fidelity != NetworkConfig::Fidelity::kPacket || config.processes != nullptr || !splittable ||
      longest_link < kLeastUnaskedLookahead) {
    return 0;
  }
  const std::size_t threads = std::min<std::size_t>({cores, 16, hosts / kLeastHostsPerUnaskedPartition});
  return threads >= 2 ? static_cast<int>(threads) : 0;
}

unsigned usable_cores() {
  if (const char* set = std::getenv("FABRICSIM_CORES"); set != nullptr && *set != '\0') {
    char* end = nullptr;
    const unsigned long n = std::strtoul(set, &end, 10);
    if (end != nullptr && *end == '\0' && n >= 1 && n <= 1024) return static_cast<unsigned>(n);
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    const int n = CPU_COUNT(&allowed);
    if (n > 0) return static_cast<unsigned>(n);
  }
  return std::thread::hardware_concurrency();
}

}  // namespace fabricsim
