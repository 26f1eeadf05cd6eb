#pragma once
#include <stdexcept>
#include <string>

namespace fabricsim {

// A problem in a config, reported as "WHERE: error: KEY.PATH: WHAT" where WHERE is
// FILE:LINE:COLUMN (or the --set option that supplied the value). Exit code 2.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(const std::string& where, const std::string& path, const std::string& what)
      : std::runtime_error(where + ": error: " + (path.empty() ? "" : path + ": ") + what), where_(where), path_(path), detail_(what) {}
  const std::string& where() const { return where_; }
  const std::string& path() const { return path_; }
  const std::string& detail() const { return detail_; }  // what was expected

 private:
  std::string where_, path_, detail_;
};

}  // namespace fabricsim
