#pragma once
// The `messages` and `workload` sections (docs/config.md): messages, traffic patterns,
// collectives, traces and their stragglers.
#include <vector>

#include <yaml-cpp/yaml.h>

#include "app/config/config.h"
#include "app/config/yaml_reader.h"

namespace fabricsim {

std::vector<MessageConfig> read_messages(const MapReader& parent, const YAML::Node& seq, int traffic_classes);
std::vector<StragglerConfig> read_stragglers(const MapReader& m, const YAML::Node& slow);
WorkloadConfig read_workload(MapReader m, int traffic_classes);

}  // namespace fabricsim
