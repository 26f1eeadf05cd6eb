#pragma once
// A figure read back from a results.json (compare, report): its number, or NaN where the
// key is absent, null or not a number (an older or a different kind of run).
#include <yaml-cpp/yaml.h>

#include <limits>

namespace fabricsim {

inline double result_number(const YAML::Node& n) {
  if (!n || !n.IsScalar()) return std::numeric_limits<double>::quiet_NaN();
  try {
    return n.as<double>();
  } catch (const YAML::Exception&) {
    return std::numeric_limits<double>::quiet_NaN();
  }
}

}  // namespace fabricsim
