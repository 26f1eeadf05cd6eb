#include "calibrate/probe_stats.h"

#include <algorithm>

namespace fabricsim {

ProbeStat summarize(std::vector<double> samples) {
  ProbeStat s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  s.min = samples.front();
  s.max = samples.back();
  s.repetitions = static_cast<int>(n);
  return s;
}

}  // namespace fabricsim
