#pragma once
// What `fabricsim topo --json` prints and the Python package's topo() returns: a fabric's
// counts, diameter and bisection (topologies/analysis.h) as one JSON object.
#include <string>

#include "topologies/analysis.h"

namespace fabricsim {

std::string topology_json(const std::string& config_name, const TopologySummary& s);

}  // namespace fabricsim
