#pragma once
// `fabricsim whatif CONFIG`: the config as written (the baseline) and each scenario of its
// `whatif` list (the baseline with the scenario's faults added and its stragglers), run
// one after another and compared: completion, collective time and busbw, iteration time
// and exposed communication, drops and pauses, and the links that got hotter.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "app/config/config.h"

namespace fabricsim {

struct HotLink {
  std::string from, to;
  double baseline = 0;  // utilization
  double now = 0;
};

struct WhatIfResult {
  std::string name;
  bool complete = false;
  Time sim_time = 0;
  Time collective_time = -1;  // the collective's last size, or the jobs' slowest
  double busbw_GBps = 0;
  Time iteration = -1;        // trace replay
  double exposed_fraction = 0;
  std::uint64_t drops = 0, pauses = 0, retransmits = 0;
  std::vector<HotLink> hotter;  // the links that gained most utilization, up to three
  double wall_seconds = 0;
};

// Runs the baseline and every scenario; `progress` hears each name as it starts.
std::vector<WhatIfResult> run_whatif(const ScenarioConfig& config, const std::function<void(const std::string&)>& progress = {});
std::string whatif_json(const ScenarioConfig& config, const std::vector<WhatIfResult>& results);
void print_whatif(std::ostream& out, const std::vector<WhatIfResult>& results);

}  // namespace fabricsim
