#include "app/commands/command.h"

namespace fabricsim {

const std::vector<const Command*>& all_commands() {
  static const std::vector<const Command*> commands{
      &kRunCommand,   &kValidateCommand, &kTopoCommand,    &kCollectiveCommand, &kWorkloadCommand,
      &kScaleCommand, &kSweepCommand,    &kCompareCommand, &kReportCommand, &kWhatifCommand,     &kCalibrateCommand, &kErrorBandsCommand};
  return commands;
}

const Command* find_command(std::string_view name) {
  for (const Command* c : all_commands()) {
    if (name == c->name) return c;
  }
  return nullptr;
}

}  // namespace fabricsim
