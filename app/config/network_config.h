#pragma once
// The `network` section (docs/config.md): packets, queues, load balancing, fidelity and
// the lossless settings (buffers, PFC, ECN, congestion control).
#include "app/config/config.h"
#include "app/config/yaml_reader.h"

namespace fabricsim {

NetworkConfig read_network(MapReader m);

}  // namespace fabricsim
