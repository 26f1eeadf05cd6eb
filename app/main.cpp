// The fabricsim command: run a scenario, validate a config, or say what it can do.
// Exit codes: 0 done, 1 run failed, 2 bad config or usage, 3 the run ended in a PFC deadlock.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "app/calibration.h"
#include "app/chrome_trace.h"
#include "app/config_error.h"
#include "app/config_loader.h"
#include "app/json_writer.h"
#include "workloads/nccl_protocol.h"
#include "app/model_files.h"
#include "app/results.h"
#include "app/compare.h"
#include "app/sweep.h"
#include "app/whatif.h"
#include "app/scenario.h"
#include "app/training_report.h"
#include "sim/units.h"
#include "topologies/analysis.h"
#include "workloads/trace.h"
#include "workloads/transformer_trace.h"

namespace po = boost::program_options;
using namespace fabricsim;

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;
// Distinct exit codes (README.md): 0 complete, 1 our own bug, 2 bad input, 3 deadlock,
// 4 incomplete (stopped by a time or event limit, or stalled), 5 a probe found no device.
constexpr int kExitDeadlock = 3;
constexpr int kExitIncomplete = 4;
constexpr int kExitNoDevice = 5;

const char* kUsage =
    "usage: fabricsim run [CONFIG] [--out DIR] [--seed N] [--threads N] [--records messages] [--trace FILE]\n"
    "                     [--set KEY=VALUE]...\n"
    "       fabricsim validate CONFIG [--set KEY=VALUE]...\n"
    "       fabricsim topo CONFIG [--json] [--dot FILE] [--set KEY=VALUE]...\n"
    "       fabricsim collective CONFIG --op OP [--algo ALGO|auto] [--proto auto|simple|ll|ll128|none] [-b MIN] [-e MAX] [-f FACTOR] [--json]\n"
    "       fabricsim workload gen --model MODEL.yaml --tp T --pp P --dp D [--ep E] --microbatches M\n"
    "                              --gpu PROFILE.yaml [--zero] [--bucket SIZE] -o TRACE.jsonl\n"
    "       fabricsim scale CONFIG --model MODEL.yaml --tp T --pp P --microbatches M --gpu PROFILE.yaml\n"
    "                              --dp-list 1,2,4 [--ep E] [--zero] [--json]\n"
    "       fabricsim calibrate import --nccl-tests LOG... | --perftest LOG... [--op OP] [--ranks N] [--algo ring|nvls]\n"
    "                              [--gpus-per-node G] [--nics-per-node K] --out PROFILE.yaml\n"
    "       fabricsim calibrate gpu [--out PROFILE.yaml] [--json]\n"
    "       fabricsim calibrate nic --server | --client HOST [--device NAME] [--gid-index N] [--port P]\n"
    "       fabricsim whatif CONFIG [--out DIR] [--set KEY=VALUE]...\n"
    "       fabricsim compare A/results.json B/results.json... [--json]\n"
    "       fabricsim sweep SPEC.yaml [--jobs N] [--out DIR]\n"
    "       fabricsim --help | --version\n";

void print_help(const po::options_description& run_options) {
  std::cout << "fabricsim " << FABRICSIM_VERSION
            << ": packet-level network simulator for AI training clusters\n\n"
            << kUsage
            << "\ncommands:\n"
               "  run       simulate CONFIG (or the built-in default scenario), print a summary and\n"
               "            write DIR/results.json (default DIR: out/<config name>)\n"
               "  validate  check CONFIG and print what it describes, without running it\n"
               "  topo      describe CONFIG's fabric: endpoints, switches, links by kind, diameter,\n"
               "            bisection bandwidth (a min cut); --json for one JSON object, --dot for Graphviz\n"
               "  collective  nccl-tests-style sweep of a collective on CONFIG's fabric: one row per size\n"
               "            with time, algbw and busbw; OP all_reduce, reduce_scatter, all_gather,\n"
               "            broadcast, reduce, all_to_all, send_recv; ALGO ring, tree, halving_doubling,\n"
               "            recursive_doubling, hierarchical, direct, msccl (--file F.xml), steps (--file F.yaml)\n"
               "  workload gen  write a training-step trace for a transformer (configs/models) under\n"
               "            tensor, pipeline (1F1B), data and expert parallelism; replay it with a\n"
               "            config whose workload is {kind: trace, file: TRACE.jsonl} (docs/traces.md)\n"
               "  scale     the same model at several data-parallel sizes on CONFIG's fabric: iteration\n"
               "            time, samples per second and weak-scaling efficiency per size\n"
               "  sweep     a grid of variants (configs x values of config keys), N runs at once, each\n"
               "            in DIR/<its values>/, resumable; DIR/sweep.csv and sweep.json summarize\n"
               "  compare   key figures of several results.json side by side, with ratios to the first\n"
               "  whatif    CONFIG as written and each scenario of its `whatif` list (faults added,\n"
               "            stragglers): completion, iteration, busbw, drops and hotter links side by side\n"
               "            (DIR/whatif.json)\n"
               "  calibrate import  fit nccl-tests and perftest logs (alpha + size/beta) and write a link\n"
               "            profile that a topology references with `profile: FILE` (docs/calibration.md)\n"
               "  calibrate gpu  measure this machine's GPUs (CUDA): copies, peers, launch, reduce, matmul\n"
               "  calibrate nic  RDMA WRITE bandwidth sweep and ping-pong latency between two hosts\n"
               "            (libibverbs); exit code 5 when there is no device to measure\n\n"
            << run_options
            << "\nA config error is printed as FILE:LINE:COLUMN: error: KEY.PATH: what was expected,\n"
               "and the exit code is 2. The config schema is in docs/config.md.\n";
}

// How long phases report on stderr: on a terminal, one line rewritten in place; with
// --progress elsewhere (a log, a batch job), a plain line every few seconds.
struct ProgressStyle {
  bool on = false;
  bool terminal = false;
};

ProgressStyle progress_style(const po::variables_map& vm) {
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  return {tty || vm.count("progress") > 0, tty};
}

std::function<void(const Progress&)> run_progress(ProgressStyle style) {
  if (!style.on) return nullptr;
  return [style, last = -1.0](const Progress& p) mutable {
    if (!style.terminal && last >= 0 && p.wall_seconds - last < 2.0) return;
    last = p.wall_seconds;
    std::fprintf(stderr, style.terminal ? "\r  sim %s  events %.1fM  messages %zu/%zu  wall %.1fs   "
                                        : "fabricsim: sim %s  events %.1fM  messages %zu/%zu  wall %.1fs\n",
                 format_time(p.sim_time).c_str(), static_cast<double>(p.events) * 1e-6, p.messages_finished, p.messages_total,
                 p.wall_seconds);
    std::fflush(stderr);
  };
}

ScenarioConfig load(const std::string& config_path, const std::vector<std::string>& sets) {
  if (config_path.empty()) return load_config_text(default_scenario_yaml(), "<built-in default>", sets);
  return load_config_file(config_path, sets);
}

bool apply_memory_limit(const po::variables_map& vm, ScenarioConfig& config) {
  if (!vm.count("memory-limit")) return true;
  const std::string text = vm["memory-limit"].as<std::string>();
  const std::int64_t bytes = parse_bytes(text).value_or(-1);
  if (bytes <= 0) {
    std::cerr << "fabricsim: --memory-limit: expected a size such as 2GiB or 500MB, got '" << text << "'\n";
    return false;
  }
  config.memory_limit = static_cast<std::uint64_t>(bytes);
  return true;
}

// The --set overrides, with --fidelity as the network.fidelity key it stands for (so
// its value is checked, and located, like the config's).
std::vector<std::string> config_sets(const po::variables_map& vm) {
  std::vector<std::string> sets = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (vm.count("fidelity")) sets.push_back("network.fidelity=" + vm["fidelity"].as<std::string>());
  return sets;
}


// Where a run writes by default: out/<name>, and for a variant made with --set,
// out/<name>-<its config hash>, so variants do not overwrite each other.
std::string default_out_dir(const ScenarioConfig& config) {
  std::string dir = "out/" + folder_name(config.name);
  if (!config.overrides.empty()) {
    char hash[12];
    std::snprintf(hash, sizeof hash, "-%08llx", static_cast<unsigned long long>(config.hash >> 32));
    dir += hash;
  }
  return dir;
}

// --seed N: a whole number from 0, as the config's `seed` is (not wrapped from -1).
bool apply_seed(const po::variables_map& vm, ScenarioConfig& config) {
  if (!vm.count("seed")) return true;
  const std::string text = vm["seed"].as<std::string>();
  std::uint64_t seed = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || seed > static_cast<std::uint64_t>(INT64_MAX)) {
    std::cerr << "fabricsim: --seed: expected a whole number from 0 to " << INT64_MAX << ", got '" << text << "'\n";
    return false;
  }
  config.seed = seed;
  return true;
}

bool apply_threads(const po::variables_map& vm, ScenarioConfig& config) {
  if (!vm.count("threads")) {
    if (vm.count("partitions")) {
      std::cerr << "fabricsim: --partitions: expected --threads too (the partitions are shared among them)\n";
      return false;
    }
    return true;
  }
  const int n = vm["threads"].as<int>();
  if (n < 1 || n > 1024) {
    std::cerr << "fabricsim: --threads: expected a number of threads from 1 to 1024, got " << n << "\n";
    return false;
  }
  config.threads = n;
  if (vm.count("partitions")) {
    const int p = vm["partitions"].as<int>();
    if (p < n || p > 65536) {
      std::cerr << "fabricsim: --partitions: expected at least --threads (" << n << ") and at most 65536, got " << p << "\n";
      return false;
    }
    config.partitions = p;
  }
  return true;
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

// How far route compilation is (the long phase before a large run starts).
RoutingProgress routing_progress(ProgressStyle style) {
  if (!style.on) return {};
  if (!style.terminal) {
    return [next = 0u](std::uint32_t done, std::uint32_t total) mutable {
      // A line per tenth, and the last.
      if (done < next && done != total) return;
      next = done + std::max(1u, total / 10);
      std::fprintf(stderr, "fabricsim: routing %u of %u destination groups\n", done, total);
      std::fflush(stderr);
    };
  }
  return [](std::uint32_t done, std::uint32_t total) {
    std::fprintf(stderr, "\r\033[K  routing  %u of %u destination groups", done, total);
    if (done == total) std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  };
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
      std::cerr << "fabricsim run: --records: expected messages, got '" << what << "'\n" << kUsage;
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

int sweep_command(const po::variables_map& vm) {
  if (!vm.count("config")) {
    std::cerr << "fabricsim sweep: needs a SPEC.yaml (config or configs, and a grid of --set keys)\n" << kUsage;
    return kExitBadInput;
  }
  const SweepSpec spec = load_sweep_spec(vm["config"].as<std::string>());
  int jobs = 1;
  if (vm.count("jobs")) {
    jobs = vm["jobs"].as<int>();
    if (jobs < 1 || jobs > 1024) {
      std::cerr << "fabricsim sweep: --jobs: expected 1 to 1024 runs at once, got " << jobs << "\n";
      return kExitBadInput;
    }
  }
  // Every variant's config is checked before anything runs, so a bad value fails at once.
  const std::vector<SweepVariant> variants = sweep_variants(spec);
  for (const SweepVariant& v : variants) {
    std::vector<std::string> sets = spec.sets;
    for (const auto& [key, value] : v.values) {
      if (key != "config") sets.push_back(key + "=" + value);
    }
    load(v.config, sets);
  }
  const std::string out_dir = vm.count("out") ? vm["out"].as<std::string>()
                                              : "out/" + folder_name(std::filesystem::path(spec.file).stem().string());
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const ProgressStyle style = progress_style(vm);
  const SweepOutcome o = run_sweep(spec, self, out_dir, jobs, [&](const SweepVariant& v, std::size_t done, std::size_t total, int code) {
    if (!style.on) return;
    std::fprintf(stderr, style.terminal ? "\r\033[K  sweep  %zu of %zu: %s%s" : "fabricsim: sweep %zu of %zu: %s%s\n", done, total,
                 v.name.c_str(), code == 0 ? "" : (" (exit " + std::to_string(code) + ")").c_str());
    std::fflush(stderr);
  });
  if (style.terminal) std::fputs("\r\033[K", stderr);
  std::cout << "fabricsim sweep: " << variants.size() << " variants: " << o.ran << " run, " << o.reused << " already done, "
            << o.failed << " failed\n  summary   " << (std::filesystem::path(out_dir) / "sweep.csv").string() << "\n";
  return o.failed > 0 ? kExitIncomplete : 0;
}

int compare_command(const po::variables_map& vm) {
  std::vector<std::string> files;
  if (vm.count("config")) files.push_back(vm["config"].as<std::string>());
  if (vm.count("more")) {
    const auto more = vm["more"].as<std::vector<std::string>>();
    files.insert(files.end(), more.begin(), more.end());
  }
  if (files.size() < 2) {
    std::cerr << "fabricsim compare: expected two or more results.json files (the first is the reference)\n" << kUsage;
    return kExitBadInput;
  }
  std::vector<CompareFigure> figures;
  try {
    figures = compare_results(files);
  } catch (const std::runtime_error& e) {
    std::cerr << "fabricsim compare: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (vm.count("json")) {
    std::cout << comparison_json(files, figures) << "\n";
  } else {
    print_comparison(std::cout, files, figures);
  }
  return 0;
}

int whatif_command(const po::variables_map& vm) {
  if (!vm.count("config")) {
    std::cerr << "fabricsim whatif: needs a CONFIG file with a `whatif` list\n" << kUsage;
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

int validate_command(const po::variables_map& vm) {
  if (!vm.count("config")) {
    std::cerr << "fabricsim validate: needs a CONFIG file\n" << kUsage;
    return kExitBadInput;
  }
  const auto sets = config_sets(vm);
  ScenarioConfig config = load(vm["config"].as<std::string>(), sets);
  if (!apply_memory_limit(vm, config)) return kExitBadInput;
  if (!apply_threads(vm, config)) return kExitBadInput;
  const std::string name = config.name;
  const std::size_t messages = config.messages.size();
  ScenarioRun run(std::move(config), routing_progress(progress_style(vm)));  // builds the network too, so name errors show here
  std::cout << vm["config"].as<std::string>() << ": ok: " << name << ", " << run.network().host_count() << " hosts, "
            << run.network().switch_count() << " switches, " << run.network().directions().size() / 2 << " links, "
            << messages << " messages\n";
  std::cout << "  memory estimate " << run.memory_estimate().describe() << "\n";
  Time lookahead = kTimeMax;
  std::size_t credit_links = 0;
  for (const LinkDirection& d : run.network().directions()) {
    lookahead = std::min(lookahead, d.link->latency());
    if (d.port->credit_based()) ++credit_links;
  }
  std::cout << "  lookahead " << format_time(lookahead) << " (the smallest link latency: how far a parallel run may work ahead)\n";
  if (const ParallelEngine* engine = run.parallel()) {
    // What the split will cost: one synchronisation (two barrier waits, under a us on a few cores)
    // per window, and a window can be no longer than the lookahead.
    const ParallelStats& s = engine->stats();
    std::cout << "  split       " << s.partitions << " partitions on " << s.threads << " threads, " << s.cut_links
              << " cut links";
    if (s.lookahead == kTimeMax) {
      std::cout << " (nothing cut: one window)\n";
    } else {
      const double windows_per_ms = 1e9 / static_cast<double>(s.lookahead);
      std::cout << ", lookahead " << format_time(s.lookahead) << ": at least " << windows_per_ms
                << " synchronisations per simulated ms\n";
      if (s.lookahead < ns(100)) {
        std::cout << "  warning     the lookahead is tiny: a busy simulated ms costs at least "
                  << windows_per_ms * 1e-6 << " s of synchronisation alone (about 1 us each on a few cores, more on many: BM_WindowSync); "
                  << "expected cut links of 100 ns or more (fewer partitions, or cut elsewhere)\n";
      }
    }
  }
  std::cout << "  flow control " << credit_links / 2 << " credit-based links (InfiniBand, PCIe, NVLink), "
            << (run.network().directions().size() - credit_links) / 2 << " Ethernet\n";
  std::printf("  built in %.3f s; peak memory %.1f MB\n", run.setup_wall_seconds(), static_cast<double>(peak_memory_bytes()) / 1e6);
  return 0;
}

int collective_command(const po::variables_map& vm) {
  if (!vm.count("config")) {
    std::cerr << "fabricsim collective: needs a CONFIG file (its topology and network are used)\n" << kUsage;
    return kExitBadInput;
  }
  std::vector<std::string> sets = config_sets(vm);
  // The config's own collective settings (algorithm, channels, chunk, ...) hold unless a
  // flag overrides them; sizes, op and data checking come from the command line.
  std::vector<std::string> kept;
  try {
    const ScenarioConfig base = load(vm["config"].as<std::string>(), sets);
    if (base.workload.kind == WorkloadConfig::Kind::kCollective) {
      const CollectiveConfig& c = base.workload.collective;
      kept.push_back("workload.algorithm=" + c.algorithm);
      if (c.protocol_given) kept.push_back("workload.protocol=" + c.protocol);
      if (!c.file.empty()) kept.push_back("workload.file=" + c.file);
      kept.push_back("workload.channels=" + std::to_string(c.channels));
      if (c.chunk_bytes > 0) kept.push_back("workload.chunk_bytes=" + std::to_string(c.chunk_bytes));
      if (c.local_size > 0) kept.push_back("workload.local_size=" + std::to_string(c.local_size));
      if (c.ranks > 0) kept.push_back("workload.ranks=" + std::to_string(c.ranks));
      if (c.root > 0) kept.push_back("workload.root=" + std::to_string(c.root));
      if (c.reduce_bytes_per_second > 0) {
        kept.push_back("workload.reduce_bandwidth=" + std::to_string(static_cast<std::int64_t>(c.reduce_bytes_per_second)) + "Bps");
      }
    }
  } catch (const ConfigError&) {
    // A config whose own workload does not load still lends its topology: the errors
    // that matter show when it is loaded below.
  }
  // The command line describes the workload; it replaces any in the config.
  sets.push_back("workload={}");
  sets.insert(sets.end(), kept.begin(), kept.end());
  const auto opt = [&](const char* key, const char* fallback) {
    std::string v = vm.count(key) ? vm[key].as<std::string>() : std::string(fallback);
    // nccl-tests writes sizes as 8, 64K, 1G (binary units): accept that too.
    if (!v.empty() && (v.back() == 'K' || v.back() == 'M' || v.back() == 'G')) v += "iB";
    return v;
  };
  sets.push_back("workload.kind=collective");
  sets.push_back("workload.op=" + opt("op", "all_reduce"));
  // NCCL's choice unless told otherwise (nccl-tests runs whatever NCCL picks).
  if (vm.count("algo") || kept.empty()) sets.push_back("workload.algorithm=" + opt("algo", "auto"));
  if (vm.count("proto")) {
    std::string proto = vm["proto"].as<std::string>();
    if (proto != "auto" && !protocol_from_name(proto)) {
      std::cerr << "fabricsim collective: --proto: expected auto, simple, ll, ll128 or none (the network alone), got '" << proto
                << "'\n";
      return kExitBadInput;
    }
    for (char& ch : proto) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    sets.push_back("workload.protocol=" + proto);
  } else if (std::none_of(kept.begin(), kept.end(), [](const std::string& k) { return k.rfind("workload.protocol=", 0) == 0; })) {
    sets.push_back("workload.protocol=auto");  // NCCL's choice, as nccl-tests gets
  }
  sets.push_back("workload.sizes.from=" + opt("minbytes", "8"));
  sets.push_back("workload.sizes.to=" + opt("maxbytes", "128MiB"));
  sets.push_back("workload.sizes.factor=" + opt("stepfactor", "2"));
  if (vm.count("file")) sets.push_back("workload.file=" + vm["file"].as<std::string>());
  if (vm.count("ranks")) sets.push_back("workload.ranks=" + vm["ranks"].as<std::string>());
  if (vm.count("channels")) sets.push_back("workload.channels=" + vm["channels"].as<std::string>());
  sets.push_back(vm.count("check") ? "workload.check_data=true" : "workload.check_data=false");
  ScenarioConfig config;
  try {
    config = load(vm["config"].as<std::string>(), sets);
  } catch (const ConfigError& e) {
    // A value the command line gave is the flag's, not a config key's.
    struct Flag {
      const char* key;     // the config key it sets
      const char* shown;   // as the user typed it
      const char* option;  // its name among the options
    };
    static const Flag kFlags[] = {{"workload.sizes.from=", "-b", "minbytes"},  {"workload.sizes.to=", "-e", "maxbytes"},
                                  {"workload.sizes.factor=", "-f", "stepfactor"}, {"workload.op=", "--op", "op"},
                                  {"workload.algorithm=", "--algo", "algo"},   {"workload.ranks=", "--ranks", "ranks"},
                                  {"workload.channels=", "--channels", "channels"}, {"workload.file=", "--file", "file"}};
    for (const Flag& f : kFlags) {
      const std::string set = std::string("--set ") + f.key;
      if (e.where().rfind(set, 0) == 0 && vm.count(f.option)) {
        throw ConfigError(std::string("fabricsim collective: ") + f.shown + " " + e.where().substr(set.size()), "", e.detail());
      }
    }
    throw;
  }
  if (!apply_seed(vm, config)) return kExitBadInput;
  ScenarioRun run(std::move(config));
  const ProgressStyle style = progress_style(vm);
  run.run(run_progress(style));
  if (style.terminal && run.events() > 4'000'000) std::fputs("\n", stderr);
  const CollectiveSweep& c = *run.collective();
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
  }
  for (const CollectiveRow& row : c.rows()) {
    if (row.data_check != "passed" && row.data_check != "off") {
      std::cerr << "fabricsim: error: data check failed at " << row.size_bytes << " bytes: " << row.data_check << "\n";
      return kExitFailure;
    }
  }
  return run.complete() ? 0 : kExitIncomplete;
}

ParallelSpec parallel_from(const po::variables_map& vm) {
  const auto count = [&](const char* key, int fallback) { return vm.count(key) ? vm[key].as<int>() : fallback; };
  ParallelSpec par;
  par.tp = count("tp", 1);
  par.pp = count("pp", 1);
  par.dp = count("dp", 1);
  par.ep = count("ep", 1);
  par.microbatches = count("microbatches", 1);
  par.zero = vm.count("zero") > 0;
  return par;
}

int workload_gen_command(const po::variables_map& vm) {
  for (const char* required : {"model", "gpu", "out"}) {
    if (!vm.count(required)) {
      std::cerr << "fabricsim workload gen: needs --" << required << "\n" << kUsage;
      return kExitBadInput;
    }
  }
  const ModelSpec model = load_model_file(vm["model"].as<std::string>());
  const GpuProfile gpu = load_gpu_profile(vm["gpu"].as<std::string>());
  ParallelSpec par = parallel_from(vm);
  if (vm.count("bucket")) {
    const auto b = parse_bytes(vm["bucket"].as<std::string>());
    if (!b || *b < 1) {
      std::cerr << "fabricsim workload gen: --bucket: expected " << kBytesUnitsHelp << "\n";
      return kExitBadInput;
    }
    par.bucket_bytes = *b;
  }
  Trace trace;
  try {
    trace = generate_transformer_trace(model, par, gpu);
  } catch (const std::invalid_argument& e) {
    std::cerr << "fabricsim workload gen: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  write_trace(trace, vm["out"].as<std::string>());
  std::size_t ops = 0;
  for (const auto& r : trace.ops) ops += r.size();
  std::cout << "fabricsim workload gen: " << model.name << " tp " << par.tp << " pp " << par.pp << " dp " << par.dp << " ep "
            << par.ep << ", " << par.microbatches << " micro-batches: " << trace.ranks << " ranks, " << ops << " operations -> "
            << vm["out"].as<std::string>() << "\n";
  return 0;
}

int scale_command(const po::variables_map& vm) {
  for (const char* required : {"config", "model", "gpu", "dp-list"}) {
    if (!vm.count(required)) {
      std::cerr << "fabricsim scale: needs " << (std::string(required) == "config" ? "a CONFIG" : std::string("--") + required) << "\n" << kUsage;
      return kExitBadInput;
    }
  }
  const ModelSpec model = load_model_file(vm["model"].as<std::string>());
  const GpuProfile gpu = load_gpu_profile(vm["gpu"].as<std::string>());
  std::vector<int> sizes;
  {
    std::istringstream in(vm["dp-list"].as<std::string>());
    std::string item;
    while (std::getline(in, item, ',')) {
      try {
        sizes.push_back(std::stoi(item));
      } catch (const std::exception&) {
        std::cerr << "fabricsim scale: --dp-list: expected numbers separated by commas, got '" << item << "'\n";
        return kExitBadInput;
      }
    }
  }
  struct Row {
    int dp, gpus;
    double iteration_ms, samples_per_s, exposed_fraction;
  };
  std::vector<Row> rows;
  const auto sets = config_sets(vm);
  for (int dp : sizes) {
    ParallelSpec par = parallel_from(vm);
    par.dp = dp;
    Trace trace;
    try {
      trace = generate_transformer_trace(model, par, gpu);
    } catch (const std::invalid_argument& e) {
      std::cerr << "fabricsim scale: dp " << dp << ": " << e.what() << "\n";
      return kExitBadInput;
    }
    const std::string path = (std::filesystem::temp_directory_path() / ("fabricsim_scale_" + std::to_string(::getpid()) + "_" + std::to_string(dp) + ".jsonl")).string();
    write_trace(trace, path);
    std::vector<std::string> with = sets;
    with.push_back("workload={}");
    with.push_back("workload.kind=trace");
    with.push_back("workload.file=" + path);
    ScenarioRun run(load(vm["config"].as<std::string>(), with));
    const ProgressStyle style = progress_style(vm);
    run.run(run_progress(style));
    if (style.terminal && run.events() > 4'000'000) std::fputs("\n", stderr);
    std::filesystem::remove(path);
    if (!run.replay()->done()) {
      std::cerr << "fabricsim scale: dp " << dp << ": the step did not finish\n";
      return kExitFailure;
    }
    const TrainingSummary s = summarize_training(*run.replay());
    const double seconds = to_seconds(s.iteration);
    rows.push_back({dp, trace.ranks, seconds * 1e3,
                    static_cast<double>(dp) * par.microbatches * static_cast<double>(model.micro_batch) / seconds, s.exposed_fraction});
  }
  const auto efficiency = [&](const Row& r) {
    return (r.samples_per_s / rows.front().samples_per_s) / (static_cast<double>(r.dp) / rows.front().dp);
  };
  if (vm.count("json")) {
    JsonWriter j;
    j.begin_array();
    for (const Row& r : rows) {
      j.begin_object();
      j.key("dp").value(r.dp).key("gpus").value(r.gpus).key("iteration_ms").value(r.iteration_ms);
      j.key("samples_per_second").value(r.samples_per_s).key("exposed_communication_fraction").value(r.exposed_fraction);
      j.key("scaling_efficiency").value(efficiency(r));
      j.end_object();
    }
    j.end_array();
    std::cout << j.str() << "\n";
    return 0;
  }
  std::cout << "# fabricsim scale: " << model.name << ", tp " << parallel_from(vm).tp << " pp " << parallel_from(vm).pp
            << ", weak scaling (micro-batches per replica fixed)\n";
  std::printf("  %6s %6s %14s %14s %10s %12s\n", "dp", "gpus", "iteration(ms)", "samples/s", "exposed", "efficiency");
  for (const Row& r : rows) {
    std::printf("  %6d %6d %14.3f %14.3f %9.1f%% %11.1f%%\n", r.dp, r.gpus, r.iteration_ms, r.samples_per_s, 100 * r.exposed_fraction,
                100 * efficiency(r));
  }
  return 0;
}

int calibrate_import_command(const po::variables_map& vm) {
  ImportRequest request;
  if (vm.count("nccl-tests")) request.nccl_tests_logs = vm["nccl-tests"].as<std::vector<std::string>>();
  if (vm.count("perftest")) request.perftest_logs = vm["perftest"].as<std::vector<std::string>>();
  if (!vm.count("out") || (request.nccl_tests_logs.empty() && request.perftest_logs.empty())) {
    std::cerr << "fabricsim calibrate import: needs --nccl-tests LOG... or --perftest LOG..., and --out PROFILE.yaml\n" << kUsage;
    return kExitBadInput;
  }
  const auto positive = [&](const char* key, int& into) {
    if (!vm.count(key)) return true;
    const std::string v = vm[key].as<std::string>();
    try {
      std::size_t used = 0;
      into = std::stoi(v, &used);
      if (used == v.size() && into > 0) return true;
    } catch (const std::exception&) {
    }
    std::cerr << "fabricsim calibrate import: --" << key << ": expected a positive whole number, got '" << v << "'\n";
    return false;
  };
  if (!positive("ranks", request.ranks) || !positive("gpus-per-node", request.gpus_per_node) ||
      !positive("nics-per-node", request.nics_per_node)) {
    return kExitBadInput;
  }
  if (vm.count("op")) {
    const std::string op = vm["op"].as<std::string>();
    const auto parsed = op_from_name(op);
    if (parsed) request.op = *parsed;
    if (!parsed) {
      std::cerr << "fabricsim calibrate import: --op: expected all_reduce, reduce_scatter, all_gather, broadcast, reduce,"
                   " all_to_all or send_recv, got '" << op << "'\n";
      return kExitBadInput;
    }
  }
  if (vm.count("algo")) {
    request.algorithm = vm["algo"].as<std::string>();
    if (request.algorithm != "ring" && request.algorithm != "nvls") {
      std::cerr << "fabricsim calibrate import: --algo: expected ring or nvls (the algorithm the log ran), got '"
                << request.algorithm << "'\n";
      return kExitBadInput;
    }
  }
  ImportResult result;
  try {
    result = import_logs(request);
  } catch (const std::exception& e) {  // an unreadable or malformed log, or one that cannot be translated
    std::cerr << "fabricsim calibrate import: " << e.what() << "\n";
    return kExitBadInput;
  }
  const std::string out = vm["out"].as<std::string>();
  write_file_atomically(out, profile_yaml(result.profile));
  std::cout << result.report << "profile written to " << out << "\n";
  return 0;
}

// The probes are executables of their own beside this one (fabricsim-probe-gpu, -nic), so
// that the simulator never loads CUDA or verbs: hand the command line over to them.
int run_probe(const std::string& what, int argc, char** argv) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path probe = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / ("fabricsim-probe-" + what);
  std::vector<char*> args{const_cast<char*>(probe.c_str())};
  int skipped = 0;  // the words "calibrate" and the probe's name, each once
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((skipped == 0 && a == "calibrate") || (skipped == 1 && a == what)) {
      ++skipped;
      continue;
    }
    args.push_back(argv[i]);
  }
  args.push_back(nullptr);
  std::cout.flush();
  execv(probe.c_str(), args.data());
  std::cerr << "fabricsim calibrate " << what << ": cannot run " << probe.string() << ": " << std::strerror(errno) << "\n";
  return kExitNoDevice;
}

int calibrate_command(const po::variables_map& vm, int argc, char** argv) {
  const std::string what = vm.count("config") ? vm["config"].as<std::string>() : "";
  if (what == "import") return calibrate_import_command(vm);
  if (what == "gpu" || what == "nic") return run_probe(what, argc, argv);
  std::cerr << "fabricsim calibrate: expected import, gpu or nic" << (what.empty() ? "" : ", got '" + what + "'") << "\n" << kUsage;
  return kExitBadInput;
}

int topo_command(const po::variables_map& vm) {
  if (!vm.count("config")) {
    std::cerr << "fabricsim topo: needs a CONFIG file\n" << kUsage;
    return kExitBadInput;
  }
  const auto sets = config_sets(vm);
  const ScenarioConfig config = load(vm["config"].as<std::string>(), sets);
  const ScenarioRun built(config);  // builds and compiles: a broken fabric is reported here
  const Topology& topology = built.topology();
  const TopologySummary s = summarize(topology);
  if (vm.count("dot")) write_file_atomically(vm["dot"].as<std::string>(), to_dot(topology));
  if (vm.count("json")) {
    JsonWriter j;
    j.begin_object();
    j.key("config_name").value(config.name);
    j.key("endpoints").value(static_cast<std::uint64_t>(s.endpoints));
    j.key("gpus").value(static_cast<std::uint64_t>(s.gpus));
    j.key("switches").value(static_cast<std::uint64_t>(s.switches));
    j.key("nics").value(static_cast<std::uint64_t>(s.nics));
    j.key("links").value(static_cast<std::uint64_t>(s.links));
    j.key("nodes_by_role").begin_object();
    for (const auto& [role, n] : s.nodes_by_role) j.key(role).value(static_cast<std::uint64_t>(n));
    j.end_object();
    j.key("links_by_tier").begin_object();
    for (const auto& [tier, n] : s.links_by_tier) j.key(tier).value(static_cast<std::uint64_t>(n));
    j.end_object();
    j.key("diameter_hops").value(s.diameter_hops);
    j.key("switch_diameter_hops").value(s.switch_diameter_hops);
    j.key("bisection_bandwidth_gbps").value(s.bisection_bandwidth_bps * 1e-9);
    j.end_object();
    std::cout << j.str();
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

int main(int argc, char** argv) {
  po::options_description run_options("options");
  run_options.add_options()
      ("help,h", "show this help")
      ("version", "print the version")
      ("out,o", po::value<std::string>()->value_name("DIR|FILE"), "run: directory for results.json; workload gen: the trace to write")
      ("seed", po::value<std::string>()->value_name("N"), "run, whatif, collective: random seed (overrides the config's)")
      ("records", po::value<std::string>()->value_name("messages"), "run: stream one JSON line per message to DIR/messages.jsonl")
      ("memory-limit", po::value<std::string>()->value_name("SIZE"), "run, validate: refuse runs estimated to need more (default: free memory)")
      ("threads", po::value<int>()->value_name("N"), "run, validate: split the run into N partitions on N threads (results are the same for any N)")
      ("partitions", po::value<int>()->value_name("P"), "run, validate: with --threads, P partitions shared among the threads")
      ("trace", po::value<std::string>()->value_name("FILE"), "run: write a timeline as Chrome trace-event JSON (Perfetto UI, chrome://tracing)")
      ("trace-interval", po::value<std::string>()->value_name("TIME"), "run: --trace's link sampling interval (default: 10us, doubling every 2048 samples)")
      ("trace-window", po::value<std::string>()->value_name("FROM:TO"), "run: --trace only this span of simulated time")
      ("trace-limit", po::value<std::string>()->value_name("N"), "run: --trace at most N events (default 1000000, about 80 MB)")
      ("trace-steps", "run: --trace the steps of a training trace's collectives too (collective workloads always have them)")
      ("jobs", po::value<int>()->value_name("N"), "sweep: runs at once (default 1)")
      ("progress", "run, validate, collective, scale, whatif: report long phases on stderr even when it is not a terminal (a line every few seconds)")
      ("fidelity", po::value<std::string>()->value_name("packet|flow"), "run, validate, collective: packet-level (default) or flow-level (max-min fair sharing; as network.fidelity)")
      ("json", "topo: print one JSON object")
      ("dot", po::value<std::string>()->value_name("FILE"), "topo: write the fabric as Graphviz")
      ("op", po::value<std::string>()->value_name("OP"), "collective: the operation (default all_reduce)")
      ("algo", po::value<std::string>()->value_name("ALGO"), "collective: the algorithm (default: the config's, else auto: NCCL's choice per size)")
      ("proto", po::value<std::string>()->value_name("PROTO"), "collective: NCCL's protocol: auto (default), simple, ll, ll128, or none (the network alone)")
      ("minbytes,b", po::value<std::string>()->value_name("SIZE"), "collective: smallest size (default 8)")
      ("maxbytes,e", po::value<std::string>()->value_name("SIZE"), "collective: largest size (default 128MiB)")
      ("stepfactor,f", po::value<std::string>()->value_name("N"), "collective: size multiplier (default 2)")
      ("file", po::value<std::string>()->value_name("FILE"), "collective: MSCCL XML or steps YAML for --algo msccl/steps")
      ("ranks", po::value<std::string>()->value_name("N"), "collective: ranks (default every endpoint)")
      ("channels", po::value<std::string>()->value_name("N"), "collective: parallel rings/trees")
      ("check", "collective: check the data at every size")
      ("model", po::value<std::string>()->value_name("FILE"), "workload gen: model file")
      ("gpu", po::value<std::string>()->value_name("FILE"), "workload gen: GPU profile file")
      ("tp", po::value<int>()->value_name("N"), "workload gen: tensor parallelism")
      ("pp", po::value<int>()->value_name("N"), "workload gen: pipeline stages")
      ("dp", po::value<int>()->value_name("N"), "workload gen: data parallelism")
      ("ep", po::value<int>()->value_name("N"), "workload gen: expert parallelism (divides dp)")
      ("microbatches", po::value<int>()->value_name("N"), "workload gen: micro-batches per step")
      ("zero", "workload gen: ReduceScatter + AllGather of gradients (ZeRO/FSDP)")
      ("bucket", po::value<std::string>()->value_name("SIZE"), "workload gen: gradient bucket (default 25MiB)")
      ("dp-list", po::value<std::string>()->value_name("N,N,..."), "scale: data-parallel sizes to run")
      ("nccl-tests", po::value<std::vector<std::string>>()->multitoken()->value_name("LOG..."), "calibrate import: nccl-tests logs")
      ("perftest", po::value<std::vector<std::string>>()->multitoken()->value_name("LOG..."), "calibrate import: perftest logs")
      ("gpus-per-node", po::value<std::string>()->value_name("G"), "calibrate import: GPUs per node (default: all ranks in one)")
      ("nics-per-node", po::value<std::string>()->value_name("K"), "calibrate import: NICs per node (default: one per GPU)")
      ("server", "calibrate nic: wait for the client")
      ("client", po::value<std::string>()->value_name("HOST"), "calibrate nic: measure towards HOST's server")
      ("device", po::value<std::string>()->value_name("NAME"), "calibrate nic: RDMA device (default: the first)")
      ("gid-index", po::value<int>()->value_name("N"), "calibrate nic: GID index (RoCE; default 0 there)")
      ("ib-port", po::value<int>()->value_name("N"), "calibrate nic: device port (default 1)")
      ("port", po::value<int>()->value_name("P"), "calibrate nic: TCP side-channel port (default 18515)")

      ("set", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
       "override a config value, e.g. --set network.mtu=9000 --set messages[0].bytes=1MiB");
  po::options_description hidden;
  hidden.add_options()
      ("command", po::value<std::string>())
      ("config", po::value<std::string>())
      ("more", po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(run_options).add(hidden);
  po::positional_options_description positional;
  positional.add("command", 1).add("config", 1).add("more", -1);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "fabricsim: " << e.what() << "\n" << kUsage;
    return kExitBadInput;
  }
  if (vm.count("help")) {
    print_help(run_options);
    return 0;
  }
  if (vm.count("version")) {
    std::cout << "fabricsim " << FABRICSIM_VERSION << "\n";
    return 0;
  }
  const std::string command = vm.count("command") ? vm["command"].as<std::string>() : "";
  try {
    if (vm.count("more") && command != "compare" && command != "workload") {
      std::cerr << "fabricsim " << command << ": unexpected argument '" << vm["more"].as<std::vector<std::string>>().front()
                << "' (one CONFIG only)\n";
      return kExitBadInput;
    }
    if (command == "run") return run_command(vm);
    if (command == "validate") return validate_command(vm);
    if (command == "topo") return topo_command(vm);
    if (command == "collective") return collective_command(vm);
    if (command == "scale") return scale_command(vm);
    if (command == "whatif") return whatif_command(vm);
    if (command == "compare") return compare_command(vm);
    if (command == "sweep") return sweep_command(vm);
    if (command == "calibrate") return calibrate_command(vm, argc, argv);
    if (command == "workload" && vm.count("config") && vm["config"].as<std::string>() == "gen") return workload_gen_command(vm);
    std::cerr << (command.empty() ? "fabricsim: no command given\n" : "fabricsim: unknown command '" + command + "'\n")
              << kUsage;
    return kExitBadInput;
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "fabricsim: error: " << e.what() << "\n";
    return kExitFailure;
  }
}
