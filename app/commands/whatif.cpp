// `fabricsim whatif`. One command, one file: its options, usage and what it runs.
#include "app/commands/command_support.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "app/config/config_loader.h"
#include "app/output/results.h"
#include "app/studies/whatif.h"

namespace fabricsim {

namespace {

void add_options(po::options_description& options) {
  options.add_options()("out,o", po::value<std::string>()->value_name("DIR"), "directory for whatif.json (default out/<config name>)");
  add_seed_option(options);
  add_memory_limit_option(options);
  add_fidelity_option(options);
  add_progress_option(options);
  add_set_option(options);
}

int whatif_command(const po::variables_map& vm) {
  if (!vm.count("config")) {
    std::cerr << "fabricsim whatif: needs a CONFIG file with a `whatif` list\n" << usage_hint("whatif");
    return kExitBadInput;
  }
  ScenarioConfig config = load(vm["config"].as<std::string>(), config_sets(vm));
  if (config.whatif.empty()) {
    std::cerr << config.file << ": error: whatif: expected a list of scenarios, e.g. whatif: [{name: spine down, faults: "
                 "[{switch: spine0, down: true}]}]\n";
    return kExitBadInput;
  }
  if (!apply_seed(vm, config)) return kExitBadInput;
  if (!apply_memory_limit(vm, config)) return kExitBadInput;
  const std::string out_dir = vm.count("out") ? vm["out"].as<std::string>() : default_out_dir(config);
  const ProgressStyle style = progress_style(vm);
  const std::size_t total = config.whatif.size() + 1;
  std::size_t done = 0;
  const std::vector<WhatIfResult> results = run_whatif(config, [&](const std::string& name) {
    if (!style.on) return;
    std::fprintf(stderr, style.terminal ? "\r\033[K  whatif  %zu of %zu: %s" : "fabricsim: whatif %zu of %zu: %s\n", ++done, total,
                 name.c_str());
  });
  if (style.terminal) std::fputs("\r\033[K", stderr);
  const std::string path = (std::filesystem::path(out_dir) / "whatif.json").string();
  write_file_atomically(path, whatif_json(config, results));
  std::cout << "fabricsim whatif: " << config.name << ", baseline and " << config.whatif.size() << " scenarios\n";
  print_whatif(std::cout, results);
  std::cout << "  results   " << path << "\n";
  return 0;
}

}  // namespace

const Command kWhatifCommand{
    "whatif",
    "fabricsim whatif CONFIG [--out DIR] [--set KEY=VALUE]...\n",
    "CONFIG as written and each scenario of its `whatif` list (faults added, stragglers): completion, iteration, busbw, drops and hotter links side by side (DIR/whatif.json)",
    add_options,
    [](const po::variables_map& vm, int, char**) { return whatif_command(vm); },
    false,
};

}  // namespace fabricsim
