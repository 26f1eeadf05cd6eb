#include "workloads/traffic/flow_size_cdf.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fabricsim {

FlowSizeCdf FlowSizeCdf::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

FlowSizeCdf FlowSizeCdf::parse(const std::string& text, const std::string& name) {
  FlowSizeCdf cdf;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    double bytes = 0, percent = 0;
    if (!(fields >> bytes)) continue;  // blank or comment
    std::string extra;
    if (!(fields >> percent) || (fields >> extra)) {
      throw std::runtime_error(name + ":" + std::to_string(number) + ": expected two numbers: bytes and cumulative percent");
    }
    if (bytes < 0 || percent < 0 || percent > 100) {
      throw std::runtime_error(name + ":" + std::to_string(number) + ": expected bytes >= 0 and a percent from 0 to 100");
    }
    if (!cdf.bytes_.empty() && (bytes < cdf.bytes_.back() || percent / 100 < cdf.cumulative_.back())) {
      throw std::runtime_error(name + ":" + std::to_string(number) + ": expected sizes and percents that never decrease");
    }
    cdf.bytes_.push_back(bytes);
    cdf.cumulative_.push_back(percent / 100);
  }
  if (cdf.bytes_.size() < 2 || std::fabs(cdf.cumulative_.back() - 1.0) > 1e-9) {
    throw std::runtime_error(name + ": expected at least two points, the last at 100 percent");
  }
  return cdf;
}

std::int64_t FlowSizeCdf::sample(Rng& rng) const {
  const double u = rng.uniform() * cumulative_.back();
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
  const std::size_t i = static_cast<std::size_t>(std::max<std::ptrdiff_t>(1, it - cumulative_.begin()));
  const std::size_t j = std::min(i, cumulative_.size() - 1);
  const double c0 = cumulative_[j - 1], c1 = cumulative_[j];
  const double x = c1 > c0 ? bytes_[j - 1] + (bytes_[j] - bytes_[j - 1]) * (u - c0) / (c1 - c0) : bytes_[j];
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(x)));
}

double FlowSizeCdf::mean() const {
  double m = 0;
  for (std::size_t i = 1; i < bytes_.size(); ++i) m += (cumulative_[i] - cumulative_[i - 1]) * (bytes_[i] + bytes_[i - 1]) / 2;
  return m;
}

}  // namespace fabricsim
