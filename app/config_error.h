#pragma once
#include <stdexcept>
#include <string>

namespace fabricsim {

// A problem in a config, reported as "WHERE: error: KEY.PATH: WHAT" where WHERE is
// FILE:LINE:COLUMN (or the --set option that supplied the value). Exit code 2.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(const std::string& where, const std::string& path, const std::string& what)
      : std::runtime_error(where + ": error: " + (path.empty() ? "" : path + ": ") + what) {}
};

}  // namespace fabricsim
