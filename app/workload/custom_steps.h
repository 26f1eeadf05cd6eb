#pragma once
// fabricsim's own format for custom collective algorithms (docs/collectives.md): a YAML
// file of per-rank step lists. Errors name file, line, column and key like configs.
#include <cstdint>
#include <string>

#include "workloads/collectives/collective.h"

namespace fabricsim {

CollectiveProgram load_custom_steps(const std::string& path, std::int64_t bytes);
CollectiveProgram parse_custom_steps(const std::string& text, const std::string& name, std::int64_t bytes);

}  // namespace fabricsim
