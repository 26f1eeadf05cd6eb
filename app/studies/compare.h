#pragma once
// `fabricsim compare A/results.json B/results.json ...`: the key figures of several runs
// side by side, each with its ratio to the first (the reference).
#include <ostream>
#include <string>
#include <vector>

namespace fabricsim {

struct CompareFigure {
  std::string name;            // e.g. "sim_time_us"
  std::vector<double> values;  // per file; NaN where the file has none
};

// Reads each results.json (std::runtime_error naming the file on a bad one).
std::vector<CompareFigure> compare_results(const std::vector<std::string>& files);
void print_comparison(std::ostream& out, const std::vector<std::string>& files, const std::vector<CompareFigure>& figures);
std::string comparison_json(const std::vector<std::string>& files, const std::vector<CompareFigure>& figures);

}  // namespace fabricsim
