#pragma once
// Told as a step of a workload's set-up ends (a collective's program built, then checked
// and prepared) and how long it took, so a run that is minutes from its first event can
// say why: the command's printer shows the steps of a second or more.
#include <functional>
#include <string>

namespace fabricsim {

using SetupNote = std::function<void(const std::string& what, double seconds)>;

}  // namespace fabricsim
