#include "app/commands/timeline_options.h"

#include <charconv>
#include <iostream>
#include <optional>

#include "sim/core/units.h"

namespace fabricsim {

void add_timeline_options(po::options_description& options) {
  options.add_options()
      ("trace", po::value<std::string>()->value_name("FILE"), "write a timeline as Chrome trace-event JSON (Perfetto UI, chrome://tracing; docs/timeline.md)")
      ("trace-interval", po::value<std::string>()->value_name("TIME"), "--trace's link sampling interval (default: 10us, coarsening as the run goes long)")
      ("trace-window", po::value<std::string>()->value_name("FROM:TO"), "--trace only this span of simulated time")
      ("trace-limit", po::value<std::string>()->value_name("N"), "--trace at most N events (default 1000000, under 100 MB)")
      ("trace-steps", "--trace the steps of a training trace's collectives too (collective workloads always have them)");
}

// --trace FILE and its bounds: a sampling interval, a window, an event limit.
bool timeline_options(const po::variables_map& vm, ChromeTraceOptions& options) {
  if (!vm.count("trace")) {
    for (const char* key : {"trace-interval", "trace-window", "trace-limit", "trace-steps"}) {
      if (vm.count(key)) {
        std::cerr << "fabricsim: --" << key << ": expected --trace FILE too (it bounds that timeline)\n";
        return false;
      }
    }
    return true;
  }
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

std::unique_ptr<ChromeTraceRecorder> start_timeline(const ChromeTraceOptions& options, ScenarioRun& run) {
  if (options.path.empty()) return nullptr;
  auto timeline = std::make_unique<ChromeTraceRecorder>(options, run);
  timeline->start();
  return timeline;
}

void finish_timeline(ChromeTraceRecorder* timeline) {
  if (timeline == nullptr) return;
  timeline->finish();
  if (timeline->events_dropped() > 0) {
    std::cerr << "fabricsim: --trace: " << timeline->events_dropped() << " events over the limit left out"
              << (timeline->links_cut_at() >= 0 ? " (link tracks stop at " + format_time(timeline->links_cut_at()) + ")" : "")
              << "; narrow it with --trace-window or --trace-interval, or raise --trace-limit\n";
  }
}

}  // namespace fabricsim
