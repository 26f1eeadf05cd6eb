#pragma once
// --trace FILE.json and its bounds, for the commands that run a scenario (run, collective).
#include <memory>

#include "app/commands/command.h"
#include "app/output/chrome_trace.h"

namespace fabricsim {

void add_timeline_options(po::options_description& options);
// Reads --trace and its bounds into `options` (path empty: no timeline); false, after
// saying why, when a value is bad or a bound is given without --trace.
bool timeline_options(const po::variables_map& vm, ChromeTraceOptions& options);
// A recorder attached to `run` (before it runs), or null when no timeline was asked for.
std::unique_ptr<ChromeTraceRecorder> start_timeline(const ChromeTraceOptions& options, ScenarioRun& run);
// After the run: writes the file whole and says on stderr what went over the bound.
void finish_timeline(ChromeTraceRecorder* timeline);

}  // namespace fabricsim
