#pragma once
// Repeated timings summarised the way benchmark users read them: the median, with the
// minimum and maximum as the spread.
#include <vector>

namespace fabricsim {

struct ProbeStat {
  double median = 0;
  double min = 0;
  double max = 0;
  int repetitions = 0;
  // (max - min) / median; 0 for no samples.
  double spread() const { return median != 0 ? (max - min) / median : 0; }
};

ProbeStat summarize(std::vector<double> samples);

}  // namespace fabricsim
