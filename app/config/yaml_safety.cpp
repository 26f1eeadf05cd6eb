#include "app/config/yaml_safety.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "app/config/config_error.h"

namespace fabricsim {

namespace {

class StructureCheck {
 public:
  StructureCheck(const std::string& file, const YamlLimits& limits) : file_(file), limits_(limits) {}

  void walk(const YAML::Node& node, const std::string& path) {
    if (++nodes_ > limits_.max_nodes) {
      fail(node, path, "aliases expand this file to more than " + std::to_string(limits_.max_nodes) +
                           " nodes; expected each alias to stand for a small part");
    }
    if (!node.IsMap() && !node.IsSequence()) return;
    for (const YAML::Node& open : open_) {
      if (open.is(node)) fail(node, path, "an alias here names a node that contains it (a cycle); expected aliases to whole, earlier nodes");
    }
    if (open_.size() >= limits_.max_depth) {
      fail(node, path, "nested more than " + std::to_string(limits_.max_depth) + " levels deep; expected a flatter file");
    }
    open_.push_back(node);
    if (node.IsMap()) {
      for (const auto& item : node) {
        const std::string key = item.first.IsScalar() ? item.first.Scalar() : "?";
        const std::string child = path.empty() ? key : path + "." + key;
        if (key == "<<") fail(item.first, child, "merge keys (<<) are not supported; expected the keys written out");
        walk(item.first, child);
        walk(item.second, child);
      }
    } else {
      for (std::size_t i = 0; i < node.size(); ++i) walk(node[i], path + "[" + std::to_string(i) + "]");
    }
    open_.pop_back();
  }

 private:
  [[noreturn]] void fail(const YAML::Node& node, const std::string& path, const std::string& what) const {
    const YAML::Mark mark = node.Mark();
    const std::string where =
        mark.is_null() ? file_ : file_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
    throw ConfigError(where, path, what);
  }

  const std::string& file_;
  const YamlLimits& limits_;
  std::size_t nodes_ = 0;
  std::vector<YAML::Node> open_;  // the maps and lists being walked, outermost first
};

}  // namespace

void check_yaml_structure(const YAML::Node& root, const std::string& file, const YamlLimits& limits) {
  StructureCheck(file, limits).walk(root, "");
}

YAML::Node parse_yaml(const std::string& text, const std::string& display) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(display + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1), "",
                      "YAML syntax: " + e.msg);
  }
  check_yaml_structure(root, display);
  return root;
}

YAML::Node read_yaml_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, "", "cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_yaml(text.str(), path);
}

}  // namespace fabricsim
