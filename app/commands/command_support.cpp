#include "app/commands/command_support.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iostream>

#include "app/config/config_loader.h"
#include "app/output/results.h"
#include "sim/core/units.h"

namespace fabricsim {

std::string usage_hint(const char* command) {
  const Command* c = find_command(command);
  return std::string("usage: ") + (c != nullptr ? c->usage : "fabricsim COMMAND ...\n") + "(fabricsim " + command +
         " --help lists its options)\n";
}

void add_set_option(po::options_description& options) {
  options.add_options()("set", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
                        "override a config value, e.g. --set network.mtu=9000 --set messages[0].bytes=1MiB");
}

void add_progress_option(po::options_description& options) {
  options.add_options()("progress", "report long phases on stderr even when it is not a terminal (a line every few seconds)");
}

void add_fidelity_option(po::options_description& options) {
  options.add_options()("fidelity", po::value<std::string>()->value_name("packet|flow"),
                        "packet-level (default) or flow-level (max-min fair sharing; as network.fidelity)");
}

void add_seed_option(po::options_description& options) {
  options.add_options()("seed", po::value<std::string>()->value_name("N"), "random seed (overrides the config's)");
}

void add_memory_limit_option(po::options_description& options) {
  options.add_options()("memory-limit", po::value<std::string>()->value_name("SIZE"),
                        "refuse runs estimated to need more (default: free memory)");
}

void add_threads_options(po::options_description& options) {
  options.add_options()
      ("threads", po::value<int>()->value_name("N"), "split the run into N partitions on N threads (results are the same for any N; by default every core, at most 16 or FABRICSIM_CORES, at most one per 64 hosts, for a packet-level run of 128 hosts or more, else one; at flow fidelity the set-up alone, by default on every core for a run of 4 GiB or more)")
      ("partitions", po::value<int>()->value_name("P"), "with --threads, P partitions shared among the threads");
}

void add_parallelism_options(po::options_description& options, bool dp) {
  options.add_options()
      ("model", po::value<std::string>()->value_name("FILE"), "model file (configs/models)")
      ("gpu", po::value<std::string>()->value_name("FILE"), "GPU profile file (configs/gpus)")
      ("tp", po::value<int>()->value_name("N"), "tensor parallelism")
      ("pp", po::value<int>()->value_name("N"), "pipeline stages")
      ("ep", po::value<int>()->value_name("N"), "expert parallelism (divides dp)")
      ("microbatches", po::value<int>()->value_name("N"), "micro-batches per step")
      ("zero", "ReduceScatter + AllGather of gradients (ZeRO/FSDP)")
      ("recompute", "full activation recomputation: each layer's forward again before its backward")
      ("no-dp-overlap", "gradients reduced in one AllReduce after the backward, not in buckets during it");
  if (dp) options.add_options()("dp", po::value<int>()->value_name("N"), "data parallelism");
}

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

// How far route compilation is (the long phase before a large run starts).
namespace {
// "WHAT DONE of TOTAL UNITS": a line per tenth off a terminal, one line redrawn on it.
RoutingProgress phase_progress(ProgressStyle style, const char* what, const char* units) {
  if (!style.on) return {};
  if (!style.terminal) {
    return [next = 0u, what, units](std::uint32_t done, std::uint32_t total) mutable {
      if (done < next && done != total) return;
      next = done + std::max(1u, total / 10);
      std::fprintf(stderr, "fabricsim: %s %u of %u %s\n", what, done, total, units);
      std::fflush(stderr);
    };
  }
  return [what, units](std::uint32_t done, std::uint32_t total) {
    std::fprintf(stderr, "\r\033[K  %s  %u of %u %s", what, done, total, units);
    if (done == total) std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  };
}
}  // namespace

RoutingProgress trace_progress(ProgressStyle style) { return phase_progress(style, "trace", "data-parallel replicas generated"); }

RoutingProgress routing_progress(ProgressStyle style) { return phase_progress(style, "routing", "destination groups"); }

SetupNote setup_note(ProgressStyle style) {
  if (!style.on) return {};
  return [](const std::string& what, double seconds) {
    if (seconds < 1.0) return;  // (a sweep's small sizes: milliseconds each)
    std::fprintf(stderr, "fabricsim: %s in %.1f s\n", what.c_str(), seconds);
    std::fflush(stderr);
  };
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
  par.recompute = vm.count("recompute") > 0;
  par.overlap_dp = vm.count("no-dp-overlap") == 0;
  return par;
}


}  // namespace fabricsim
