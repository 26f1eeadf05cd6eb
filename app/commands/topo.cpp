// `fabricsim topo`. One command, one file: its options, usage and what it runs.
#include "app/commands/command_support.h"

#include <cstdio>
#include <iostream>

#include "app/config/config_loader.h"
#include "app/output/topology_json.h"
#include "app/output/results.h"
#include "topologies/analysis.h"

namespace fabricsim {

namespace {

void add_options(po::options_description& options) {
  options.add_options()
      ("json", "print one JSON object")
      ("dot", po::value<std::string>()->value_name("FILE"), "write the fabric as Graphviz");
  add_set_option(options);
}

int topo_command(const po::variables_map& vm) {
  if (!vm.count("config")) {
    std::cerr << "fabricsim topo: needs a CONFIG file\n" << usage_hint("topo");
    return kExitBadInput;
  }
  const auto sets = config_sets(vm);
  const ScenarioConfig config = load(vm["config"].as<std::string>(), sets);
  const ScenarioRun built(config);  // builds and compiles: a broken fabric is reported here
  const Topology& topology = built.topology();
  const TopologySummary s = summarize(topology);
  if (vm.count("dot")) write_file_atomically(vm["dot"].as<std::string>(), to_dot(topology));
  if (vm.count("json")) {
    std::cout << topology_json(config.name, s);
    return 0;
  }
  std::cout << "fabricsim topo: " << config.name << "\n";
  std::cout << "  endpoints   " << s.endpoints << " (" << s.gpus << " GPUs)\n";
  std::cout << "  switches    " << s.switches << ", and " << s.nics << " NICs\n";
  std::cout << "  nodes       ";
  for (const auto& [role, n] : s.nodes_by_role) std::cout << role << " " << n << "  ";
  std::cout << "\n  links       " << s.links << ":  ";
  for (const auto& [tier, n] : s.links_by_tier) std::cout << tier << " " << n << "  ";
  char bisection[64];
  std::snprintf(bisection, sizeof bisection, "%.1f Gb/s", s.bisection_bandwidth_bps * 1e-9);
  std::cout << "\n  diameter    "
            << (s.diameter_hops >= 0 ? std::to_string(s.diameter_hops) : "(not worked out above 16,384 endpoints)")
            << " hops between endpoints, " << s.switch_diameter_hops
            << " between switches\n";
  std::cout << "  bisection   " << bisection << " (min cut, first half of endpoints to second)\n";
  if (vm.count("dot")) std::cout << "  graphviz    " << vm["dot"].as<std::string>() << "\n";
  return 0;
}

}  // namespace

const Command kTopoCommand{
    "topo",
    "fabricsim topo CONFIG [--json] [--dot FILE] [--set KEY=VALUE]...\n",
    "describe CONFIG's fabric: endpoints, switches, links by kind, diameter, bisection bandwidth (a min cut); --json for one JSON object, --dot for Graphviz",
    add_options,
    [](const po::variables_map& vm, int, char**) { return topo_command(vm); },
    false,
};

}  // namespace fabricsim
