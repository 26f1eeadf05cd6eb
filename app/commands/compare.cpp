// `fabricsim compare`. One command, one file: its options, usage and what it runs.
#include "app/commands/command_support.h"

#include <iostream>
#include <stdexcept>

#include "app/config/config_loader.h"
#include "app/studies/compare.h"

namespace fabricsim {

namespace {

void add_options(po::options_description& options) {
  options.add_options()("json", "print one JSON object");
}

int compare_command(const po::variables_map& vm) {
  std::vector<std::string> files;
  if (vm.count("config")) files.push_back(vm["config"].as<std::string>());
  if (vm.count("more")) {
    const auto more = vm["more"].as<std::vector<std::string>>();
    files.insert(files.end(), more.begin(), more.end());
  }
  if (files.size() < 2) {
    std::cerr << "fabricsim compare: expected two or more results.json files (the first is the reference)\n" << usage_hint("compare");
    return kExitBadInput;
  }
  Comparison comparison;
  try {
    comparison = compare_results(files);
  } catch (const std::runtime_error& e) {
    std::cerr << "fabricsim compare: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (vm.count("json")) {
    std::cout << comparison_json(comparison) << "\n";
  } else {
    print_comparison(std::cout, comparison);
  }
  return 0;
}

}  // namespace

const Command kCompareCommand{
    "compare",
    "fabricsim compare A/results.json B/results.json... [--json]\n",
    "key figures of several results.json side by side (each run's config, overrides and fidelity above; a collective's figures per size), with ratios to the first",
    add_options,
    [](const po::variables_map& vm, int, char**) { return compare_command(vm); },
    true,
};

}  // namespace fabricsim
