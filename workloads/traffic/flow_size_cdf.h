#pragma once
// A flow-size distribution given as points of its CDF, "bytes cumulative-percent" per
// line ('#' starts a comment), linearly interpolated between points: the format of the
// WebSearch and FB_Hadoop files that congestion-control studies (DCQCN, HPCC) use.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/rng.h"

namespace fabricsim {

class FlowSizeCdf {
 public:
  // Throws std::runtime_error "FILE:LINE: what" on a malformed file.
  static FlowSizeCdf load(const std::string& path);
  static FlowSizeCdf parse(const std::string& text, const std::string& name);

  // Inverse-transform sample, at least one byte.
  std::int64_t sample(Rng& rng) const;
  // Mean of the interpolated distribution: sum over segments of weight * midpoint.
  double mean() const;

 private:
  std::vector<double> bytes_;
  std::vector<double> cumulative_;  // 0..1
};

}  // namespace fabricsim
