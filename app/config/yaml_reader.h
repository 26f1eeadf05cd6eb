#pragma once
// Typed, located reading of a YAML tree: every failure names file, line, column and
// key path and says what was expected; keys nobody asked for are reported as unknown.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "app/config/config.h"
#include "app/config/config_error.h"
#include "sim/core/time.h"

namespace fabricsim {

class YamlContext {
 public:
  explicit YamlContext(std::string file) : file_(std::move(file)) {}

  // Records that `path` was set by "--set TEXT", so errors there point at the option.
  void add_override(const std::string& path, const std::string& text) { overrides_[path] = text; }

  std::string where(const YAML::Node& node, const std::string& path) const;
  SourceRef source(const YAML::Node& node, const std::string& path) const { return {where(node, path), path}; }
  [[noreturn]] void fail(const YAML::Node& node, const std::string& path, const std::string& what) const {
    throw ConfigError(where(node, path), path, what);
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::map<std::string, std::string> overrides_;
};

class MapReader {
 public:
  // Fails unless `node` is a map. An absent (undefined or null) node reads as empty.
  MapReader(const YamlContext& ctx, YAML::Node node, std::string path);

  bool has(const std::string& key) const;
  std::string child_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  const YamlContext& context() const { return *ctx_; }

  // Each getter marks the key as known. With a default, the key is optional.
  std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max,
                       std::optional<std::int64_t> fallback = std::nullopt);
  double real(const std::string& key, double min, double max, std::optional<double> fallback = std::nullopt);
  bool boolean(const std::string& key, std::optional<bool> fallback = std::nullopt);
  std::string string(const std::string& key, std::optional<std::string> fallback = std::nullopt);
  Time time(const std::string& key, std::optional<Time> fallback = std::nullopt);
  Bandwidth bandwidth(const std::string& key, std::optional<Bandwidth> fallback = std::nullopt);
  std::int64_t bytes(const std::string& key, std::int64_t min, std::int64_t max,
                     std::optional<std::int64_t> fallback = std::nullopt);
  template <typename T>
  T choice(const std::string& key, const std::vector<std::pair<std::string, T>>& options,
           std::optional<T> fallback = std::nullopt);
  MapReader map(const std::string& key, bool required = true);
  // The sequence under `key` (empty if absent and not required).
  YAML::Node sequence(const std::string& key, bool required);
  std::vector<std::string> string_list(const std::string& key, bool required);
  // A list of integers, each from `min` to `max`; errors point at the offending item.
  std::vector<std::int64_t> integer_list(const std::string& key, std::int64_t min, std::int64_t max, bool required);

  // Fails on the first key no getter asked for.
  void finish() const;

 private:
  // The scalar text at `key`, or nullopt if absent; fails if it is not a scalar.
  std::optional<std::string> scalar(const std::string& key, const char* expected);
  [[noreturn]] void missing(const std::string& key, const std::string& expected) const;

  const YamlContext* ctx_;
  YAML::Node node_;
  std::string path_;
  std::set<std::string> known_;
};

template <typename T>
T MapReader::choice(const std::string& key, const std::vector<std::pair<std::string, T>>& options,
                    std::optional<T> fallback) {
  std::string expected = "one of";
  for (std::size_t i = 0; i < options.size(); ++i) expected += (i ? ", " : " ") + options[i].first;
  const auto text = scalar(key, expected.c_str());
  if (!text) {
    if (fallback) return *fallback;
    missing(key, expected);
  }
  for (const auto& [name, value] : options) {
    if (name == *text) return value;
  }
  ctx_->fail(node_[key], child_path(key), "expected " + expected + ", got '" + *text + "'");
}

// A path named in a config, relative to the config file's folder (as given where the
// config came from text or standard input).
std::string resolve_config_path(const std::string& config_file, const std::string& path);
inline std::string resolve_config_path(const YamlContext& ctx, const std::string& path) {
  return resolve_config_path(ctx.file(), path);
}

}  // namespace fabricsim
