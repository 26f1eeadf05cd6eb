#pragma once
// Congestion-control schemes by the name of their config section under `network`, each
// with the reader of its keys. A scheme is sim/endpoint/cc/<name>.h/.cpp plus one entry here.
#include <memory>

#include "app/config/yaml_reader.h"
#include "sim/endpoint/congestion_control.h"
#include "sim/net/ecn_marker.h"

namespace fabricsim {

// Reads the one congestion-control section of `network` (none: rate-less, null).
// `ecn` is the network's marking, which some schemes need.
std::shared_ptr<const CongestionControl> read_congestion_control(MapReader& network, const EcnConfig& ecn);

}  // namespace fabricsim
