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
// The `workload` section: its kind, start and traffic class; the kind's own keys are read
// by the kind (app/workload/workload_kind.h).
WorkloadConfig read_workload(MapReader m, const NetworkConfig& network);

// For the kinds' readers: collectives' and traces' `placement` (each endpoint once) ...
void read_placement(MapReader& m, WorkloadConfig& w);
// ... and a message's bytes, whose packets at `mtu` are numbered in 32 bits.
void check_packet_count(const YamlContext& ctx, const YAML::Node& at, const std::string& path, std::int64_t bytes, std::int64_t mtu);

}  // namespace fabricsim
