#pragma once
// One fabricsim command: its name, usage lines, what it does, its own options, and the
// function that runs it. app/main.cpp finds the command by its first word and parses
// only that command's options, so `fabricsim COMMAND --help` shows them and an option
// meant for another command is an error, not silently ignored.
#include <boost/program_options.hpp>
#include <string_view>
#include <vector>

namespace fabricsim {

namespace po = boost::program_options;

struct Command {
  const char* name;
  const char* usage;    // its usage lines, each beginning "fabricsim NAME"
  const char* summary;  // what it does, for the help
  void (*add_options)(po::options_description& options);
  int (*run)(const po::variables_map& vm, int argc, char** argv);
  bool many_arguments = false;  // positional arguments after the first (compare, workload gen)
};

// Defined one per file in app/commands/.
extern const Command kRunCommand;
extern const Command kValidateCommand;
extern const Command kTopoCommand;
extern const Command kCollectiveCommand;
extern const Command kWorkloadCommand;
extern const Command kScaleCommand;
extern const Command kSweepCommand;
extern const Command kCompareCommand;
extern const Command kReportCommand;
extern const Command kWhatifCommand;
extern const Command kCalibrateCommand;
extern const Command kErrorBandsCommand;

// In the order the help lists them.
const std::vector<const Command*>& all_commands();
const Command* find_command(std::string_view name);

}  // namespace fabricsim
