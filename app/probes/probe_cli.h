#pragma once
// What the probe executables share: their exit codes and the progress line on a terminal.
// The probes are executables of their own so that `fabricsim` never loads CUDA or verbs.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

namespace fabricsim {

constexpr int kExitProbeBadInput = 2;
constexpr int kExitNoDevice = 5;

inline void probe_progress(const std::string& line) {
  if (!isatty(STDERR_FILENO)) return;
  std::fprintf(stderr, "\r\033[K  %s", line.c_str());
  std::fflush(stderr);
}

inline void end_progress() {
  if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\r\033[K");
}

// A probe executable's main: its options plus --help, parse errors as exit 2, the probe's
// own failures as exit 1.
inline int probe_main(int argc, char** argv, const std::string& name, boost::program_options::options_description& options,
                      int (*probe)(const boost::program_options::variables_map&)) {
  namespace po = boost::program_options;
  options.add_options()("help,h", "show this help");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "fabricsim calibrate " << name << ": " << e.what() << "\n" << options;
    return kExitProbeBadInput;
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  try {
    return probe(vm);
  } catch (const std::exception& e) {
    std::cerr << "fabricsim calibrate " << name << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace fabricsim
