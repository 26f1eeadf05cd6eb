#pragma once
// `fabricsim compare A/results.json B/results.json ...`: the key figures of several runs
// side by side, each with its ratio to the first (the reference), under a header that
// says what each run was (config name, --set overrides, fidelity, seed).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace fabricsim {

struct CompareFigure {
  std::string name;            // e.g. "sim_time_us", "busbw_GBps @ 1 MiB"
  std::vector<double> values;  // per file; NaN where the file has none
  bool headline = true;        // false for the endpoint counters: a sweep's table leaves them out
};

// What one compared file was.
struct ComparedRun {
  std::string file;
  std::string label;        // its column: the config name, made unique
  std::string config_name;  // "-" where the file does not say (a `collective --json` array)
  std::string fidelity;     // packet or flow; "-" where not said
  std::string config_hash;
  std::vector<std::string> overrides;
  std::int64_t seed = -1;   // -1 where not said
};

struct Comparison {
  std::vector<ComparedRun> runs;
  std::vector<CompareFigure> figures;
};

// Reads each results.json, or the rows `fabricsim collective --json` prints
// (std::runtime_error naming the file on anything else).
Comparison compare_results(const std::vector<std::string>& files);
void print_comparison(std::ostream& out, const Comparison& c);
std::string comparison_json(const Comparison& c);

}  // namespace fabricsim
