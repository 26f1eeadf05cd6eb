#pragma once
// The `topology:` section: one reader per fabric kind, each checking ranges and
// cross-field rules (k even, dimensions >= 1, a known preset) with located errors.
#include "app/config/config.h"
#include "app/config/yaml_reader.h"

namespace fabricsim {

TopologyConfig read_topology(MapReader m);

}  // namespace fabricsim
