#pragma once
// `fabricsim sweep SPEC.yaml`: a grid of variants (configs x values of --set keys), each
// run as a `fabricsim run` process of its own, up to `jobs` at once, each in a folder
// named by its values; then a summary (sweep.csv, sweep.json) with one row per variant
// and its key figures. A variant whose results.json is already there, from the same
// effective config (its config_hash), is not run again; one from another config is rerun.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fabricsim {

struct SweepSpec {
  std::string file;                  // the spec, for messages
  std::vector<std::string> configs;  // resolved against the spec's folder
  // The grid: key -> values, in the spec's order.
  std::vector<std::pair<std::string, std::vector<std::string>>> grid;
  std::vector<std::string> sets;     // applied to every variant
};

struct SweepVariant {
  std::string name;    // folder name: its values, joined
  std::string config;
  std::vector<std::pair<std::string, std::string>> values;  // ("config", file) first when several
  std::string config_hash;  // the effective config's, as results.json writes it; empty: not known
};

// Throws ConfigError (file:line:col) on a bad spec.
SweepSpec load_sweep_spec(const std::string& path);
std::vector<SweepVariant> sweep_variants(const SweepSpec& spec);

struct SweepOutcome {
  std::size_t ran = 0, reused = 0, failed = 0;
  std::size_t stale = 0;  // of `ran`: their earlier results came from another config
  std::string table;      // the key figures per variant, for a terminal
};

// Runs what is missing or stale under `out_dir` with `fabricsim` (this executable) at most `jobs`
// at a time, then writes out_dir/sweep.csv and sweep.json. `progress` hears each
// variant as it ends.
// `variants` are sweep_variants(spec), with their config_hash filled where known.
SweepOutcome run_sweep(const SweepSpec& spec, const std::vector<SweepVariant>& variants, const std::string& fabricsim, const std::string& out_dir, int jobs,
                       const std::function<void(const SweepVariant&, std::size_t done, std::size_t total, int exit_code)>& progress);

}  // namespace fabricsim
