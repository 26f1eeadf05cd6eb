// `fabricsim sweep`. One command, one file: its options, usage and what it runs.
#include "app/commands/command_support.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "app/config/config_loader.h"
#include "app/output/results.h"
#include "app/studies/sweep.h"

namespace fabricsim {

namespace {

void add_options(po::options_description& options) {
  options.add_options()
      ("out,o", po::value<std::string>()->value_name("DIR"), "where the variants and the summaries go (default out/<spec name>)")
      ("jobs", po::value<int>()->value_name("N"), "runs at once (default 1)");
  add_progress_option(options);
}

int sweep_command(const po::variables_map& vm) {
  if (!vm.count("config")) {
    std::cerr << "fabricsim sweep: needs a SPEC.yaml (config or configs, and a grid of --set keys)\n" << usage_hint("sweep");
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
  // Its hash tells a finished variant from a stale one.
  std::vector<SweepVariant> variants = sweep_variants(spec);
  for (SweepVariant& v : variants) {
    std::vector<std::string> sets = spec.sets;
    for (const auto& [key, value] : v.values) {
      if (key != "config") sets.push_back(key + "=" + value);
    }
    v.config_hash = config_hash_text(load(v.config, sets).hash);
  }
  const std::string out_dir = vm.count("out") ? vm["out"].as<std::string>()
                                              : "out/" + folder_name(std::filesystem::path(spec.file).stem().string());
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const ProgressStyle style = progress_style(vm);
  const SweepOutcome o = run_sweep(spec, variants, self, out_dir, jobs, [&](const SweepVariant& v, std::size_t done, std::size_t total, int code) {
    if (!style.on) return;
    std::fprintf(stderr, style.terminal ? "\r\033[K  sweep  %zu of %zu: %s%s" : "fabricsim: sweep %zu of %zu: %s%s\n", done, total,
                 v.name.c_str(), code == 0 ? "" : (" (exit " + std::to_string(code) + ")").c_str());
    std::fflush(stderr);
  });
  if (style.terminal) std::fputs("\r\033[K", stderr);
  std::cout << o.table << "fabricsim sweep: " << variants.size() << " variants: " << o.ran << " run";
  if (o.stale > 0) std::cout << " (" << o.stale << " again: their config changed since their results)";
  std::cout << ", " << o.reused << " already done, " << o.failed << " failed\n  summary   "
            << (std::filesystem::path(out_dir) / "sweep.csv").string() << "\n";
  return o.failed > 0 ? kExitIncomplete : 0;
}

}  // namespace

const Command kSweepCommand{
    "sweep",
    "fabricsim sweep SPEC.yaml [--jobs N] [--out DIR]\n",
    "a grid of variants (configs x values of config keys), N runs at once, each in DIR/<its values>/, resumable; DIR/sweep.csv and sweep.json summarize",
    add_options,
    [](const po::variables_map& vm, int, char**) { return sweep_command(vm); },
    false,
};

}  // namespace fabricsim
