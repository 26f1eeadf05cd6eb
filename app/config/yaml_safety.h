#pragma once
// YAML's anchors and aliases make a graph, not a tree: an alias inside the node it names
// is a cycle (every walk of it recurses forever), and aliases of aliases multiply (nine
// levels of ten give 10^9 nodes). Every file we read is checked before anything walks
// it: a cycle, an expansion beyond a limit, nesting beyond a depth, or a merge key
// (`<<`, which yaml-cpp reads as a plain key) is a located config error.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>

namespace fabricsim {

struct YamlLimits {
  std::size_t max_nodes = 4'000'000;  // nodes once every alias is expanded
  std::size_t max_depth = 200;        // maps and lists inside one another
};

// Throws ConfigError naming `file`, the node's line and column, and its key path.
void check_yaml_structure(const YAML::Node& root, const std::string& file, const YamlLimits& limits = {});

// `text` parsed and checked; a syntax error is a ConfigError at its line and column of
// `display` (the file's name, or how the text was given).
YAML::Node parse_yaml(const std::string& text, const std::string& display);
// The file at `path`, read, parsed and checked ("cannot read the file" when it cannot be).
YAML::Node read_yaml_file(const std::string& path);

}  // namespace fabricsim
