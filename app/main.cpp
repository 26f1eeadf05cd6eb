// The fabricsim command line: finds the command named by the first word and hands it
// the rest, parsed with that command's own options (app/commands/, one file each).
// Exit codes (README.md): 0 complete, 1 our own bug, 2 bad input, 3 deadlock,
// 4 incomplete, 5 a probe found no device.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "app/commands/command.h"
#include "app/commands/command_support.h"
#include "app/config/config_error.h"
#include "app/config/did_you_mean.h"
#include "app/mpi/launch.h"

using namespace fabricsim;

namespace {

// `text` in lines of at most `width` columns, each after `indent` spaces but the first.
std::string wrapped(const std::string& text, std::size_t indent, std::size_t width = 92) {
  std::string out, line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + line;
}

void print_usage(std::ostream& out) {
  bool first = true;
  for (const Command* c : all_commands()) {
    out << (first ? "usage: " : "       ") << c->usage;
    first = false;
  }
  out << "       fabricsim COMMAND --help | fabricsim --help | fabricsim --version\n";
}

void print_help() {
  std::cout << "fabricsim " << FABRICSIM_VERSION << ": packet-level network simulator for AI training clusters\n\n";
  print_usage(std::cout);
  std::cout << "\ncommands:\n";
  for (const Command* c : all_commands()) {
    const std::string name = c->name;
    std::cout << "  " << name << std::string(name.size() < 11 ? 11 - name.size() : 1, ' ') << wrapped(c->summary, 13) << "\n";
  }
  std::cout << "\n`fabricsim COMMAND --help` lists that command's options.\n"
               "A config error is printed as FILE:LINE:COLUMN: error: KEY.PATH: what was expected,\n"
               "and the exit code is 2. The config schema is in docs/config.md.\n";
}

void print_command_help(const Command& c, const po::options_description& options) {
  std::cout << "usage: " << c.usage << "\n" << wrapped(c.summary, 0) << "\n\n" << options;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string first = argc > 1 ? argv[1] : "";
  if (first == "--help" || first == "-h") {
    print_help();
    return 0;
  }
  if (first == "--version") {
    std::cout << "fabricsim " << FABRICSIM_VERSION << "\n";
    return 0;
  }
  const Command* command = find_command(first);
  if (command == nullptr) {
    std::cerr << (first.empty() ? "fabricsim: no command given\n" : "fabricsim: unknown command '" + first + "'\n");
    print_usage(std::cerr);
    return kExitBadInput;
  }
  if (launched_processes() > 1 && std::string_view(command->name) != "run") {
    // Each process would do the whole command and write the same files.
    if (launched_rank() == 0) {
      std::cerr << "fabricsim " << command->name << ": started by mpirun with " << launched_processes()
                << " processes; only `fabricsim run` splits over processes: expected `mpirun -np N fabricsim run CONFIG`\n";
    }
    return kExitBadInput;
  }
  po::options_description own(std::string("fabricsim ") + command->name + " options");
  own.add_options()("help,h", "show this command's options");
  command->add_options(own);
  po::options_description hidden;
  hidden.add_options()
      ("config", po::value<std::string>())
      ("more", po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(own).add(hidden);
  po::positional_options_description positional;
  positional.add("config", 1).add("more", -1);
  po::variables_map vm;
  try {
    // The command's word stands where a parser expects the program's name.
    po::store(po::command_line_parser(argc - 1, argv + 1).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    // A misspelt option: name the one meant (--output: --out).
    std::vector<std::string> names;
    for (const auto& option : own.options()) names.push_back("--" + option->long_name());
    std::string given = e.get_option_name();
    given = given.substr(0, given.find('='));
    const std::string near = closest_name(given, names);
    std::cerr << "fabricsim " << command->name << ": " << e.what() << (near.empty() ? "" : "; did you mean " + near + "?") << "\n"
              << usage_hint(command->name);
    return kExitBadInput;
  } catch (const po::error& e) {
    std::cerr << "fabricsim " << command->name << ": " << e.what() << "\n" << usage_hint(command->name);
    return kExitBadInput;
  }
  if (vm.count("help")) {
    print_command_help(*command, own);
    return 0;
  }
  try {
    if (vm.count("more") && !command->many_arguments) {
      std::cerr << "fabricsim " << command->name << ": unexpected argument '"
                << vm["more"].as<std::vector<std::string>>().front() << "' (one CONFIG only)\n";
      return kExitBadInput;
    }
    return command->run(vm, argc, argv);
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "fabricsim: error: " << e.what() << "\n";
    return kExitFailure;
  }
}
