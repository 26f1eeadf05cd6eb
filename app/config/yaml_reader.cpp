#include "app/config/yaml_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "app/config/did_you_mean.h"
#include "sim/core/units.h"

namespace fabricsim {

std::string YamlContext::where(const YAML::Node& node, const std::string& path) const {
  // A value from --set (or inside one) points at the option, not at the file: the most
  // specific one (`--set workload={}` then `--set workload.sizes.to=0`: the second).
  const std::string* best = nullptr;
  std::size_t best_length = 0;
  for (const auto& [p, text] : overrides_) {
    if ((path == p || path.rfind(p + ".", 0) == 0 || path.rfind(p + "[", 0) == 0) && (best == nullptr || p.size() >= best_length)) {
      best = &text;
      best_length = p.size();
    }
  }
  if (best != nullptr) return "--set " + *best;
  const YAML::Mark mark = node.IsDefined() ? node.Mark() : YAML::Mark::null_mark();
  if (mark.is_null()) return file_;
  return file_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

MapReader::MapReader(const YamlContext& ctx, YAML::Node node, std::string path)
    : ctx_(&ctx), node_(std::move(node)), path_(std::move(path)) {
  if (node_.IsDefined() && !node_.IsNull() && !node_.IsMap()) {
    ctx_->fail(node_, path_.empty() ? "(top level)" : path_, "expected a map of keys to values");
  }
}

bool MapReader::has(const std::string& key) const {
  return node_.IsMap() && node_[key].IsDefined() && !node_[key].IsNull();
}

namespace {
constexpr std::size_t kTypoDistance = 2;
}  // namespace

void MapReader::missing(const std::string& key, const std::string& expected) const {
  // A misspelt key present in the map is the likelier mistake: point at it instead.
  if (node_.IsMap()) {
    for (const auto& kv : node_) {
      const std::string k = kv.first.Scalar();
      if (!known_.count(k) && edit_distance(k, key) <= kTypoDistance) {
        ctx_->fail(kv.first, child_path(k), "unknown key; did you mean '" + key + "'?");
      }
    }
  }
  ctx_->fail(node_, child_path(key), "missing required key; expected " + expected);
}

std::optional<std::string> MapReader::scalar(const std::string& key, const char* expected) {
  known_.insert(key);
  if (!has(key)) return std::nullopt;
  const YAML::Node v = node_[key];
  if (!v.IsScalar()) ctx_->fail(v, child_path(key), std::string("expected ") + expected);
  return v.Scalar();
}

std::int64_t MapReader::integer(const std::string& key, std::int64_t min, std::int64_t max,
                                std::optional<std::int64_t> fallback) {
  const std::string expected = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  const auto text = scalar(key, expected.c_str());
  if (!text) {
    if (fallback) return *fallback;
    missing(key, expected);
  }
  // Plain integers, and integral exponent forms such as 1e9.
  errno = 0;
  char* end = nullptr;
  const long double v = std::strtold(text->c_str(), &end);
  const bool numeric = !text->empty() && end == text->c_str() + text->size() && errno == 0 && std::isfinite(v);
  if (!numeric || v != std::floor(v)) ctx_->fail(node_[key], child_path(key), "expected " + expected + ", got '" + *text + "'");
  if (v < static_cast<long double>(min) || v > static_cast<long double>(max)) {
    ctx_->fail(node_[key], child_path(key), "expected " + expected + ", got " + *text);
  }
  return static_cast<std::int64_t>(v);
}

double MapReader::real(const std::string& key, double min, double max, std::optional<double> fallback) {
  char range[96];
  std::snprintf(range, sizeof range, "a number from %g to %g", min, max);
  const auto text = scalar(key, range);
  if (!text) {
    if (fallback) return *fallback;
    missing(key, range);
  }
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text->c_str(), &end);
  if (text->empty() || end != text->c_str() + text->size() || errno != 0 || !std::isfinite(v) || v < min || v > max) {
    ctx_->fail(node_[key], child_path(key), std::string("expected ") + range + ", got '" + *text + "'");
  }
  return v;
}

bool MapReader::boolean(const std::string& key, std::optional<bool> fallback) {
  const auto text = scalar(key, "true or false");
  if (!text) {
    if (fallback) return *fallback;
    missing(key, "true or false");
  }
  if (*text == "true") return true;
  if (*text == "false") return false;
  ctx_->fail(node_[key], child_path(key), "expected true or false, got '" + *text + "'");
}

std::string MapReader::string(const std::string& key, std::optional<std::string> fallback) {
  const auto text = scalar(key, "a string");
  if (!text) {
    if (fallback) return *fallback;
    missing(key, "a string");
  }
  if (text->empty()) ctx_->fail(node_[key], child_path(key), "expected a non-empty string");
  return *text;
}

Time MapReader::time(const std::string& key, std::optional<Time> fallback) {
  const auto text = scalar(key, kTimeUnitsHelp);
  if (!text) {
    if (fallback) return *fallback;
    missing(key, kTimeUnitsHelp);
  }
  if (*text == "0") return 0;  // zero needs no unit
  const auto t = parse_time(*text);
  if (!t) ctx_->fail(node_[key], child_path(key), std::string("expected ") + kTimeUnitsHelp + ", got '" + *text + "'");
  return *t;
}

Bandwidth MapReader::bandwidth(const std::string& key, std::optional<Bandwidth> fallback) {
  const auto text = scalar(key, kBandwidthUnitsHelp);
  if (!text) {
    if (fallback) return *fallback;
    missing(key, kBandwidthUnitsHelp);
  }
  const auto bw = parse_bandwidth(*text);
  if (!bw) ctx_->fail(node_[key], child_path(key), std::string("expected ") + kBandwidthUnitsHelp + ", got '" + *text + "'");
  if (bw->bits_per_second <= 0) ctx_->fail(node_[key], child_path(key), "expected a bandwidth above zero, got '" + *text + "'");
  return *bw;
}

std::int64_t MapReader::bytes(const std::string& key, std::int64_t min, std::int64_t max,
                              std::optional<std::int64_t> fallback) {
  const std::string expected = std::string(kBytesUnitsHelp) + ", from " + std::to_string(min) + " to " +
                               std::to_string(max) + " bytes";
  const auto text = scalar(key, expected.c_str());
  if (!text) {
    if (fallback) return *fallback;
    missing(key, expected);
  }
  const auto b = parse_bytes(*text);
  if (!b || *b < min || *b > max) ctx_->fail(node_[key], child_path(key), "expected " + expected + ", got '" + *text + "'");
  return *b;
}

MapReader MapReader::map(const std::string& key, bool required) {
  known_.insert(key);
  if (required && !has(key)) missing(key, "a map");
  return MapReader(*ctx_, node_.IsMap() ? node_[key] : YAML::Node(), child_path(key));
}

YAML::Node MapReader::sequence(const std::string& key, bool required) {
  known_.insert(key);
  if (!has(key)) {
    if (required) missing(key, "a list");
    return YAML::Node(YAML::NodeType::Sequence);
  }
  const YAML::Node v = node_[key];
  if (!v.IsSequence()) ctx_->fail(v, child_path(key), "expected a list");
  return v;
}

std::vector<std::string> MapReader::string_list(const std::string& key, bool required) {
  const YAML::Node seq = sequence(key, required);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const std::string p = child_path(key) + "[" + std::to_string(i) + "]";
    if (!seq[i].IsScalar() || seq[i].Scalar().empty()) ctx_->fail(seq[i], p, "expected a non-empty name");
    out.push_back(seq[i].Scalar());
  }
  return out;
}

std::vector<std::int64_t> MapReader::integer_list(const std::string& key, std::int64_t min, std::int64_t max,
                                                  bool required) {
  const YAML::Node seq = sequence(key, required);
  const std::string expected = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const std::string text = seq[i].IsScalar() ? seq[i].Scalar() : "";
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || v < min || v > max) {
      ctx_->fail(seq[i], child_path(key) + "[" + std::to_string(i) + "]", "expected " + expected + ", got '" + text + "'");
    }
    out.push_back(v);
  }
  return out;
}

void MapReader::finish() const {
  if (!node_.IsMap()) return;
  for (const auto& kv : node_) {
    const std::string key = kv.first.Scalar();
    if (known_.count(key)) continue;
    std::string expected;
    for (const auto& k : known_) {
      if (edit_distance(k, key) <= kTypoDistance) ctx_->fail(kv.first, child_path(key), "unknown key; did you mean '" + k + "'?");
      expected += (expected.empty() ? "" : ", ") + k;
    }
    ctx_->fail(kv.first, child_path(key), "unknown key; expected one of: " + expected);
  }
}

std::string resolve_config_path(const std::string& file, const std::string& path) {
  if (std::filesystem::path(path).is_absolute() || file.empty() || file.front() == '<' || file.front() == '-') return path;
  return (std::filesystem::path(file).parent_path() / path).string();
}

}  // namespace fabricsim
