// `fabricsim run`. One command, one file: its options, usage and what it runs.
#include "app/commands/command_support.h"

#include <charconv>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "app/config/config_loader.h"
#include "app/output/chrome_trace.h"
#include "app/output/results.h"
#include "sim/units.h"

namespace fabricsim {

namespace {

void add_options(po::options_description& options) {
  options.add_options()
      ("out,o", po::value<std::string>()->value_name("DIR"), "directory for results.json (default out/<config name>)")
      ("records", po::value<std::string>()->value_name("messages"), "stream one JSON line per message to DIR/messages.jsonl")
      ("trace", po::value<std::string>()->value_name("FILE"), "write a timeline as Chrome trace-event JSON (Perfetto UI, chrome://tracing; docs/timeline.md)")
      ("trace-interval", po::value<std::string>()->value_name("TIME"), "--trace's link sampling interval (default: 10us, doubling every 2048 samples)")
      ("trace-window", po::value<std::string>()->value_name("FROM:TO"), "--trace only this span of simulated time")
      ("trace-limit", po::value<std::string>()->value_name("N"), "--trace at most N events (default 1000000, about 80 MB)")
      ("trace-steps", "--trace the steps of a training trace's collectives too (collective workloads always have them)");
  add_seed_option(options);
  add_memory_limit_option(options);
  add_threads_options(options);
  add_fidelity_option(options);
  add_progress_option(options);
  add_set_option(options);
}

// --trace FILE and its bounds: a sampling interval, a window, an event limit.
bool trace_options(const po::variables_map& vm, ChromeTraceOptions& options) {
  options.path = vm["trace"].as<std::string>();
  if (options.path.empty()) {
    std::cerr << "fabricsim: --trace: expected a file name for the timeline, got ''\n";
    return false;
  }
  if (vm.count("trace-interval")) {
    const std::string text = vm["trace-interval"].as<std::string>();
    const auto t = parse_time(text);
    if (!t || *t < 1000) {
      std::cerr << "fabricsim: --trace-interval: expected " << kTimeUnitsHelp << ", at least 1ns, got '" << text << "'\n";
      return false;
    }
    options.interval = *t;
    options.fixed_interval = true;
  }
  if (vm.count("trace-window")) {
    const std::string text = vm["trace-window"].as<std::string>();
    const auto colon = text.find(':');
    const auto from = colon == std::string::npos ? std::nullopt : parse_time(text.substr(0, colon));
    const auto to = colon == std::string::npos ? std::nullopt : parse_time(text.substr(colon + 1));
    if (!from || !to || *from < 0 || *to <= *from) {
      std::cerr << "fabricsim: --trace-window: expected FROM:TO, two times with FROM before TO (e.g. 0:2ms), got '" << text
                << "'\n";
      return false;
    }
    options.from = *from;
    options.to = *to;
  }
  if (vm.count("trace-limit")) {
    const std::string text = vm["trace-limit"].as<std::string>();
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < 1) {
      std::cerr << "fabricsim: --trace-limit: expected a number of events from 1, got '" << text << "'\n";
      return false;
    }
    options.max_events = n;
  }
  options.trace_steps = vm.count("trace-steps") > 0;
  return true;
}

int run_command(const po::variables_map& vm) {
  const std::string config_path = vm.count("config") ? vm["config"].as<std::string>() : "";
  const auto sets = config_sets(vm);
  ScenarioConfig config = load(config_path, sets);
  if (!apply_seed(vm, config)) return kExitBadInput;
  if (!apply_memory_limit(vm, config)) return kExitBadInput;
  if (!apply_threads(vm, config)) return kExitBadInput;
  const std::string out_dir = vm.count("out") ? vm["out"].as<std::string>() : default_out_dir(config);
  ChromeTraceOptions trace;
  if (vm.count("trace") && !trace_options(vm, trace)) return kExitBadInput;
  ScenarioRun run(std::move(config), routing_progress(progress_style(vm)));
  std::unique_ptr<ChromeTraceRecorder> timeline;
  if (vm.count("trace")) {
    timeline = std::make_unique<ChromeTraceRecorder>(trace, run);
    timeline->start();
  }
  if (vm.count("records")) {
    const std::string what = vm["records"].as<std::string>();
    if (what != "messages") {
      std::cerr << "fabricsim run: --records: expected messages, got '" << what << "'\n" << usage_hint("run");
      return kExitBadInput;
    }
    run.message_log().record_to((std::filesystem::path(out_dir) / "messages.jsonl").string());
  }
  const ProgressStyle style = progress_style(vm);
  run.run(run_progress(style));
  if (style.terminal && run.events() > 4'000'000) std::fputs("\n", stderr);
  // Several jobs: each alone on the same endpoints too, for what sharing cost it.
  if (run.job_count() > 1) run.measure_jobs_alone();
  const std::string results_path = (std::filesystem::path(out_dir) / "results.json").string();
  run.message_log().finish_records();
  if (timeline) {
    timeline->finish();
    if (timeline->events_dropped() > 0) {
      std::cerr << "fabricsim: --trace: " << timeline->events_dropped() << " events over the limit left out"
                << (timeline->links_cut_at() >= 0 ? " (link tracks stop at " + format_time(timeline->links_cut_at()) + ")" : "")
                << "; narrow it with --trace-window or --trace-interval, or raise --trace-limit\n";
    }
  }
  write_file_atomically(results_path, results_json(run));
  print_summary(std::cout, run, results_path);
  if (run.deadlocked()) return kExitDeadlock;
  return run.complete() ? 0 : kExitIncomplete;
}

}  // namespace

const Command kRunCommand{
    "run",
    "fabricsim run [CONFIG] [--out DIR] [--seed N] [--threads N] [--records messages] [--trace FILE] [--set KEY=VALUE]...\n",
    "simulate CONFIG (or the built-in default scenario), print a summary and write DIR/results.json (default DIR: out/<config name>)",
    add_options,
    [](const po::variables_map& vm, int, char**) { return run_command(vm); },
    false,
};

}  // namespace fabricsim
