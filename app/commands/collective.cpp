// `fabricsim collective`. One command, one file: its options, usage and what it runs.
#include "app/commands/command_support.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "app/config/config_loader.h"
#include "app/commands/timeline_options.h"
#include "app/config/config_error.h"
#include "app/output/json_writer.h"
#include "app/output/results.h"
#include "app/workload/collective_request.h"
#include "workloads/collectives/nccl_protocol.h"

namespace fabricsim {

namespace {

// The registry's algorithms (workloads/collectives/collective_algorithms.h), listed once.
const std::string& algo_help() {
  static const std::string help = [] {
    std::string h = "the algorithm (default: the config's, else auto: NCCL's choice per size): auto, msccl, steps";
    for (const std::string& name : algorithm_names()) h += ", " + name;
    return h;
  }();
  return help;
}

// A value the command line gave is the flag's, not a config key's: an error about it
// names the flag, whether loading (`--set key=`) or building (the key) found it.
[[noreturn]] void blame_flag(const po::variables_map& vm, const ConfigError& e) {
  struct Flag {
    const char* key;     // the config key it sets
    const char* shown;   // as the user typed it
    const char* option;  // its name among the options
  };
  static const Flag kFlags[] = {{"workload.sizes.from", "-b", "minbytes"},  {"workload.sizes.to", "-e", "maxbytes"},
                                {"workload.sizes.factor", "-f", "stepfactor"}, {"workload.op", "--op", "op"},
                                {"workload.algorithm", "--algo", "algo"},   {"workload.ranks", "--ranks", "ranks"},
                                {"workload.channels", "--channels", "channels"}, {"workload.file", "--file", "file"},
                                {"network.nccl_version", "--nccl-version", "nccl-version"}};
  for (const Flag& f : kFlags) {
    if (!vm.count(f.option)) continue;
    const std::string set = std::string("--set ") + f.key + "=";
    if (e.where().rfind(set, 0) == 0) {
      throw ConfigError(std::string("fabricsim collective: ") + f.shown + " " + e.where().substr(set.size()), "", e.detail());
    }
    if (e.path() == f.key) {
      throw ConfigError(std::string("fabricsim collective: ") + f.shown + " " + vm[f.option].as<std::string>(), "", e.detail());
    }
  }
  throw e;
}

void add_options(po::options_description& options) {
  options.add_options()
      ("op", po::value<std::string>()->value_name("OP"), "the operation (default all_reduce)")
      ("algo", po::value<std::string>()->value_name("ALGO"), algo_help().c_str())
      ("proto", po::value<std::string>()->value_name("PROTO"), "NCCL's protocol: auto (default), simple, ll, ll128, or none (the network alone)")
      ("nccl-version", po::value<std::string>()->value_name("VERSION"), "whose tuning rules NCCL's model follows: 2.18 to 2.30 (default 2.28; a release maps to its line, 2.28.7 to its patch)")
      ("minbytes,b", po::value<std::string>()->value_name("SIZE"), "smallest size (default 8)")
      ("maxbytes,e", po::value<std::string>()->value_name("SIZE"), "largest size (default 128MiB)")
      ("stepfactor,f", po::value<std::string>()->value_name("N"), "size multiplier (default 2)")
      ("file", po::value<std::string>()->value_name("FILE"), "MSCCL XML or steps YAML for --algo msccl/steps")
      ("ranks", po::value<std::string>()->value_name("N"), "ranks (default every endpoint)")
      ("channels", po::value<std::string>()->value_name("N"), "parallel rings/trees")
      ("check", "check the data at every size")
      ("out,o", po::value<std::string>()->value_name("DIR"), "also write DIR/results.json, as `run` writes it (plot, compare and report read it)")
      ("json", "print the rows as a JSON array");
  add_timeline_options(options);
  add_seed_option(options);
  add_threads_options(options);
  add_fidelity_option(options);
  add_progress_option(options);
  add_set_option(options);
}

int collective_command(const po::variables_map& vm) {
  if (!vm.count("config")) {
    std::cerr << "fabricsim collective: needs a CONFIG file (its topology and network are used)\n" << usage_hint("collective");
    return kExitBadInput;
  }
  std::vector<std::string> sets = config_sets(vm);
  std::optional<ScenarioConfig> base;
  try {
    base = load(vm["config"].as<std::string>(), sets);
  } catch (const ConfigError&) {
    // A config whose own workload does not load still lends its topology: the errors
    // that matter show when it is loaded below.
  }
  // The flags, by the request's field names where they differ.
  static const std::map<std::string, std::string> kFlagOf{{"algorithm", "algo"},        {"protocol", "proto"},
                                                          {"nccl_version", "nccl-version"}, {"min_bytes", "minbytes"},
                                                          {"max_bytes", "maxbytes"},     {"step_factor", "stepfactor"}};
  CollectiveRequest request;
  request.for_each_text_field([&](const char* name, std::optional<std::string>& field) {
    const auto flag = kFlagOf.find(name);
    const std::string option = flag == kFlagOf.end() ? name : flag->second;
    if (vm.count(option)) field = vm[option].as<std::string>();
  });
  request.check_data = vm.count("check") > 0;
  if (request.protocol && *request.protocol != "auto" && !protocol_from_name(*request.protocol)) {
    std::cerr << "fabricsim collective: --proto: expected auto, simple, ll, ll128 or none (the network alone), got '"
              << *request.protocol << "'\n";
    return kExitBadInput;
  }
  const std::vector<std::string> request_sets = collective_sets(base ? &*base : nullptr, request, sets);
  sets.insert(sets.end(), request_sets.begin(), request_sets.end());
  ScenarioConfig config;
  try {
    config = load(vm["config"].as<std::string>(), sets);
  } catch (const ConfigError& e) {
    blame_flag(vm, e);
  }
  if (!apply_seed(vm, config)) return kExitBadInput;
  if (!apply_threads(vm, config)) return kExitBadInput;
  ChromeTraceOptions trace;
  if (!timeline_options(vm, trace)) return kExitBadInput;
  std::optional<ScenarioRun> built;
  try {
    const ProgressStyle shown = progress_style(vm);
    built.emplace(std::move(config), routing_progress(shown), trace_progress(shown), setup_note(shown));
  } catch (const ConfigError& e) {
    blame_flag(vm, e);  // e.g. --ranks above the endpoints, found when the workload is built
  }
  ScenarioRun& run = *built;
  const std::unique_ptr<ChromeTraceRecorder> timeline = start_timeline(trace, run);
  const ProgressStyle style = progress_style(vm);
  run.run(run_progress(style));
  if (style.terminal && run.events() > ScenarioRun::kFirstProgressEvents) std::fputs("\n", stderr);
  finish_timeline(timeline.get());
  const CollectiveSweep& c = *run.collective();
  std::string results_path;
  if (vm.count("out")) {
    results_path = (std::filesystem::path(vm["out"].as<std::string>()) / "results.json").string();
    write_results_file(results_path, run);
  }
  if (vm.count("json")) {
    JsonWriter j;
    j.begin_array();
    for (const CollectiveRow& row : c.rows()) {
      j.begin_object();
      write_row_fields(j, row);
      j.end_object();
    }
    j.end_array();
    std::cout << j.str() << "\n";
  } else {
    std::cout << "# fabricsim collective: " << op_name(c.config().op) << ", algorithm " << c.config().algorithm << ", "
              << c.ranks() << " ranks, on " << run.config().name << "\n";
    print_collective_table(std::cout, c);
    if (!results_path.empty()) std::cout << "  results   " << results_path << "\n";
  }
  for (const CollectiveRow& row : c.rows()) {
    if (row.data_check != "passed" && row.data_check != "off") {
      std::cerr << "fabricsim: error: data check failed at " << row.size_bytes << " bytes: " << row.data_check << "\n";
      return kExitFailure;
    }
  }
  return run.complete() ? 0 : kExitIncomplete;
}

}  // namespace

const Command kCollectiveCommand{
    "collective",
    "fabricsim collective CONFIG --op OP [--algo ALGO|auto] [--proto auto|simple|ll|ll128|none] [-b MIN] [-e MAX] [-f FACTOR] [--json]\n"
    "                            [--out DIR] [--trace FILE] [--threads N]\n",
    "nccl-tests-style sweep of a collective on CONFIG's fabric: one row per size with time, algbw and busbw; OP all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all, send_recv; ALGO a built-in algorithm (--algo lists them), msccl (--file F.xml), steps (--file F.yaml), or auto (NCCL's choice per size)",
    add_options,
    [](const po::variables_map& vm, int, char**) { return collective_command(vm); },
    false,
};

}  // namespace fabricsim
