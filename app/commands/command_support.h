#pragma once
// What several commands share: exit codes, progress on stderr, loading a config with
// --set overrides, and the options that mean the same for every command that takes them.
#include <functional>
#include <string>
#include <vector>

#include "app/commands/command.h"
#include "app/config/config.h"
#include "app/scenario/scenario.h"
#include "workloads/traces/transformer_trace.h"

namespace fabricsim {

// Distinct exit codes (README.md): 0 complete, 1 our own bug, 2 bad input, 3 deadlock,
// 4 incomplete (stopped by a time or event limit, or stalled), 5 a probe found no device.
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitDeadlock = 3;
constexpr int kExitIncomplete = 4;
constexpr int kExitNoDevice = 5;

// After a usage error: the command's usage lines and where its options are listed.
std::string usage_hint(const char* command);

// Options that several commands take, added to a command's own.
void add_set_option(po::options_description& options);       // --set KEY=VALUE...
void add_progress_option(po::options_description& options);  // --progress
void add_fidelity_option(po::options_description& options);  // --fidelity
void add_seed_option(po::options_description& options);      // --seed
void add_memory_limit_option(po::options_description& options);
void add_threads_options(po::options_description& options);  // --threads, --partitions
void add_parallelism_options(po::options_description& options, bool dp);  // --model, --gpu, --tp, ... (workload gen, scale)

// How long phases report on stderr: on a terminal, one line rewritten in place; with
// --progress elsewhere (a log, a batch job), a plain line every few seconds.
struct ProgressStyle {
  bool on = false;
  bool terminal = false;
};
ProgressStyle progress_style(const po::variables_map& vm);
std::function<void(const Progress&)> run_progress(ProgressStyle style);
// How far route compilation is (the long phase before a large run starts).
RoutingProgress routing_progress(ProgressStyle style);
// How far a generated training step is (workload.generate), likewise.
RoutingProgress trace_progress(ProgressStyle style);
// The end of another long step of the set-up (a collective's program built, checked).
SetupNote setup_note(ProgressStyle style);

// CONFIG with overrides, or the built-in default scenario when the path is empty.
ScenarioConfig load(const std::string& config_path, const std::vector<std::string>& sets);
// The --set overrides, with --fidelity as the network.fidelity key it stands for (so
// its value is checked, and located, like the config's).
std::vector<std::string> config_sets(const po::variables_map& vm);
// Where a run writes by default: out/<name>, and for a variant made with --set,
// out/<name>-<its config hash>, so variants do not overwrite each other.
std::string default_out_dir(const ScenarioConfig& config);
// Each applies its option when given; false (after printing why) when its value is bad.
bool apply_seed(const po::variables_map& vm, ScenarioConfig& config);
bool apply_memory_limit(const po::variables_map& vm, ScenarioConfig& config);
bool apply_threads(const po::variables_map& vm, ScenarioConfig& config);
// --tp, --pp, --dp, --ep, --microbatches, --zero.
ParallelSpec parallel_from(const po::variables_map& vm);

}  // namespace fabricsim
