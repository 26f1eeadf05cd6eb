// `fabricsim run`. One command, one file: its options, usage and what it runs.
#include "app/commands/command_support.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include "app/config/config_error.h"
#include "app/config/config_loader.h"
#include "app/commands/timeline_options.h"
#include "app/mpi/launch.h"
#include "app/output/results.h"

namespace fabricsim {

namespace {

void add_options(po::options_description& options) {
  options.add_options()
      ("out,o", po::value<std::string>()->value_name("DIR"), "directory for results.json (default out/<config name>)")
      ("records", po::value<std::string>()->value_name("messages"), "stream one JSON line per message to DIR/messages.jsonl");
  add_timeline_options(options);
  add_seed_option(options);
  add_memory_limit_option(options);
  add_threads_options(options);
  add_fidelity_option(options);
  add_progress_option(options);
  add_set_option(options);
}


// The run in this process; `processes` when mpirun started several.
int run_here(const po::variables_map& vm, ProcessGroup* processes) {
  const bool writer = processes == nullptr || processes->rank() == 0;
  const int error_fd = processes != nullptr ? dup(STDERR_FILENO) : -1;  // a failure is said whoever has it
  if (!writer && std::getenv("FABRICSIM_MPI_VERBOSE") == nullptr) {
    if (std::freopen("/dev/null", "w", stdout) == nullptr || std::freopen("/dev/null", "w", stderr) == nullptr) return kExitFailure;
  }
  const std::string config_path = vm.count("config") ? vm["config"].as<std::string>() : "";
  const auto sets = config_sets(vm);
  ScenarioConfig config = load(config_path, sets);
  if (!apply_seed(vm, config)) return kExitBadInput;
  if (!apply_memory_limit(vm, config)) return kExitBadInput;
  if (!apply_threads(vm, config)) return kExitBadInput;
  config.processes = processes;
  const std::string out_dir = vm.count("out") ? vm["out"].as<std::string>() : default_out_dir(config);
  ChromeTraceOptions trace;
  if (!timeline_options(vm, trace)) return kExitBadInput;
  if (processes != nullptr && !trace.path.empty()) {
    std::cerr << "fabricsim run: --trace: a timeline watches every link from one process; expected no --trace under "
                 "mpirun (use --threads for a split run with a timeline)\n";
    return kExitBadInput;
  }
  // Not freed at the end of a run in one process: returning millions of small blocks to
  // the allocator took seconds at 16,384 GPUs, and the process's exit frees it all at once.
  auto owned = std::make_unique<ScenarioRun>(std::move(config), routing_progress(progress_style(vm)),
                                             trace_progress(progress_style(vm)), setup_note(progress_style(vm)));
  ScenarioRun& run = *owned;
  const std::unique_ptr<ChromeTraceRecorder> timeline = start_timeline(trace, run);
  if (vm.count("records")) {
    const std::string what = vm["records"].as<std::string>();
    if (what != "messages") {
      std::cerr << "fabricsim run: --records: expected messages, got '" << what << "'\n" << usage_hint("run");
      return kExitBadInput;
    }
    if (run.splits_collective() && processes != nullptr) {
      std::cerr << "fabricsim run: --records: a collective's or trace's messages are followed at each sender's "
                   "process, and no one process has them all; expected no --records under mpirun for this workload "
                   "(--threads writes them)\n";
      return kExitBadInput;
    }
    if (writer) run.message_log().record_to((std::filesystem::path(out_dir) / "messages.jsonl").string());
  }
  const ProgressStyle style = progress_style(vm);
  try {
    run.run(run_progress(style));
  } catch (const std::exception& e) {
    // Set-up fails alike everywhere, so every process exits on its own; a failure during
    // the run is this process's alone, and the others would wait for it for ever.
    if (processes == nullptr) throw;
    dprintf(error_fd, "fabricsim: error in process %d of %d: %s\n", processes->rank(), processes->size(), e.what());
    processes->abort(kExitFailure);
  }
  if (style.terminal && run.events() > ScenarioRun::kFirstProgressEvents) std::fputs("\n", stderr);
  // Several jobs: each alone on the same endpoints too, for what sharing cost it.
  if (run.job_count() > 1) run.measure_jobs_alone();
  const std::string results_path = (std::filesystem::path(out_dir) / "results.json").string();
  if (writer) {
    run.message_log().finish_records();
    finish_timeline(timeline.get());
    write_results_file(results_path, run);
    print_summary(std::cout, run, results_path);
  }
  const int code = run.deadlocked() ? kExitDeadlock : run.complete() ? 0 : kExitIncomplete;
  if (processes == nullptr) (void)owned.release();
  return code;
}

int run_command(const po::variables_map& vm, int argc, char** argv) {
  // Under mpirun each process runs its share of the partitions; the first one reports and
  // writes, the others say nothing (FABRICSIM_MPI_VERBOSE=1 lets them).
  std::unique_ptr<ProcessGroup> processes;
  try {
    processes = open_launched_processes(&argc, &argv);
  } catch (const std::runtime_error& e) {
    // mpirun started several of us but this build cannot split a run: the user's setup.
    if (launched_rank() == 0) std::cerr << "fabricsim run: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (processes == nullptr) return run_here(vm, nullptr);
  int code = kExitBadInput;
  try {
    code = run_here(vm, processes.get());
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";  // (the others' stderr is closed)
  }
  // Bad input is found alike by every process. All wait until the first has said so:
  // mpirun stops the rest once one exits with an error, and could stop the first before
  // it speaks.
  if (code == kExitBadInput) {
    std::cerr.flush();
    std::vector<std::int64_t> none{0};
    processes->all_sum(none);
  }
  return code;
}

}  // namespace

const Command kRunCommand{
    "run",
    "fabricsim run [CONFIG] [--out DIR] [--seed N] [--threads N] [--records messages] [--trace FILE] [--set KEY=VALUE]...\n",
    "simulate CONFIG (or the built-in default scenario), print a summary and write DIR/results.json (default DIR: "
    "out/<config name>); `mpirun -np N fabricsim run CONFIG` splits one run over N processes (docs/parallel.md)",
    add_options,
    [](const po::variables_map& vm, int argc, char** argv) { return run_command(vm, argc, argv); },
    false,
};

}  // namespace fabricsim
