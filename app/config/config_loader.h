#pragma once
// YAML -> ScenarioConfig. Throws ConfigError (file, line, column, key path, what was
// expected) on anything malformed: unknown keys, wrong types, missing keys, bad units,
// impossible values, names that refer to nothing.
#include <string>
#include <vector>

#include "app/config/config.h"

namespace fabricsim {

// `overrides` are "KEY.PATH=VALUE" strings as given to --set; they are applied to the
// YAML tree before it is read, so they are checked like everything else.
ScenarioConfig load_config_file(const std::string& path, const std::vector<std::string>& overrides = {});
// `display_name` stands in for a file name in errors; `name` defaults to it.
ScenarioConfig load_config_text(const std::string& text, const std::string& display_name,
                                const std::vector<std::string>& overrides = {});

// The built-in scenario `fabricsim run` uses without a config: a small leaf/spine with a
// few messages.
const char* default_scenario_yaml();

}  // namespace fabricsim
