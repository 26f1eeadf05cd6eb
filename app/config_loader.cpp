#include "app/config_loader.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "app/yaml_reader.h"

namespace fabricsim {
namespace {

constexpr std::int64_t kMaxCount = 1'000'000;

LinkSpec read_link(MapReader m) {
  LinkSpec l;
  l.bandwidth = m.bandwidth("bandwidth");
  l.latency = m.time("latency", ns(500));
  m.finish();
  return l;
}

TopologyConfig read_topology(MapReader m) {
  TopologyConfig t;
  t.source = m.context().source(m.node(), m.path());
  t.kind = m.choice<TopologyConfig::Kind>(
      "kind", {{"leaf_spine", TopologyConfig::Kind::kLeafSpine}, {"custom", TopologyConfig::Kind::kCustom}});
  if (t.kind == TopologyConfig::Kind::kLeafSpine) {
    LeafSpineSpec& s = t.leaf_spine;
    s.leaves = static_cast<int>(m.integer("leaves", 1, 4096));
    s.spines = static_cast<int>(m.integer("spines", 1, 4096));
    s.hosts_per_leaf = static_cast<int>(m.integer("hosts_per_leaf", 1, 4096));
    s.links_per_pair = static_cast<int>(m.integer("links_per_pair", 1, 64, 1));
    s.host_link = read_link(m.map("host_link"));
    s.fabric_link = read_link(m.map("fabric_link"));
  } else {
    CustomTopologyConfig& c = t.custom;
    const YamlContext& ctx = m.context();
    std::set<std::string> names;
    const auto add_names = [&](const char* key, std::vector<std::string>& out, bool required) {
      out = m.string_list(key, required);
      const YAML::Node seq = m.node()[key];
      for (std::size_t i = 0; i < out.size(); ++i) {
        if (!names.insert(out[i]).second) {
          ctx.fail(seq[i], m.child_path(key) + "[" + std::to_string(i) + "]",
                   "expected a name not used before, got '" + out[i] + "' again");
        }
      }
    };
    add_names("hosts", c.hosts, true);
    add_names("switches", c.switches, false);
    if (c.hosts.size() < 2) ctx.fail(m.node()["hosts"], m.child_path("hosts"), "expected at least two hosts");
    const YAML::Node links = m.sequence("links", true);
    for (std::size_t i = 0; i < links.size(); ++i) {
      MapReader lm(ctx, links[i], m.child_path("links") + "[" + std::to_string(i) + "]");
      if (!links[i].IsMap()) ctx.fail(links[i], lm.path(), "expected a map with a, b, bandwidth, latency");
      CustomLinkConfig l;
      for (const char* end : {"a", "b"}) {
        std::string& name = std::string(end) == "a" ? l.a : l.b;
        name = lm.string(end);
        if (!names.count(name)) {
          ctx.fail(links[i][end], lm.child_path(end), "expected the name of a host or switch listed above, got '" + name + "'");
        }
      }
      if (l.a == l.b) ctx.fail(links[i]["b"], lm.child_path("b"), "expected a node other than a ('" + l.a + "')");
      l.link.bandwidth = lm.bandwidth("bandwidth");
      l.link.latency = lm.time("latency", ns(500));
      lm.finish();
      c.links.push_back(std::move(l));
    }
  }
  m.finish();
  return t;
}

NetworkConfig read_network(MapReader m) {
  NetworkConfig n;
  n.mtu = m.bytes("mtu", 1, 1 << 20, n.mtu);
  n.header_bytes = m.bytes("header_bytes", 0, 4096, n.header_bytes);
  n.ack_bytes = m.bytes("ack_bytes", 1, 4096, n.ack_bytes);
  n.ack_interval = m.integer("ack_interval", 1, 1 << 20, n.ack_interval);
  n.traffic_classes = static_cast<int>(m.integer("traffic_classes", 1, 8, n.traffic_classes));
  n.ack_traffic_class =
      static_cast<int>(m.integer("ack_traffic_class", 0, n.traffic_classes - 1, n.traffic_classes - 1));
  n.queue_capacity = m.bytes("queue_capacity", 1, INT64_C(1) << 40, n.queue_capacity);
  if (n.queue_capacity < n.mtu + n.header_bytes) {
    m.context().fail(m.node()["queue_capacity"], m.child_path("queue_capacity"),
                     "expected at least one full packet (mtu + header_bytes = " +
                         std::to_string(n.mtu + n.header_bytes) + " bytes)");
  }
  n.load_balancing = m.choice<LoadBalancing>("load_balancing", {{"ecmp", LoadBalancing::kEcmp}, {"spray", LoadBalancing::kSpray}},
                                             LoadBalancing::kEcmp);
  m.finish();
  return n;
}

std::vector<MessageConfig> read_messages(const MapReader& parent, const YAML::Node& seq, int traffic_classes) {
  const YamlContext& ctx = parent.context();
  std::vector<MessageConfig> out;
  if (seq.size() > static_cast<std::size_t>(kMaxCount) * 10) ctx.fail(seq, "messages", "expected at most 10 million messages");
  out.reserve(seq.size());
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const std::string path = "messages[" + std::to_string(i) + "]";
    if (!seq[i].IsMap()) ctx.fail(seq[i], path, "expected a map with src, dst, bytes and optionally start, traffic_class");
    MapReader m(ctx, seq[i], path);
    MessageConfig msg;
    msg.src = m.string("src");
    msg.src_source = ctx.source(seq[i]["src"], m.child_path("src"));
    msg.dst = m.string("dst");
    msg.dst_source = ctx.source(seq[i]["dst"], m.child_path("dst"));
    if (msg.src == msg.dst) ctx.fail(seq[i]["dst"], m.child_path("dst"), "expected a host other than src ('" + msg.src + "')");
    msg.bytes = m.bytes("bytes", 1, INT64_C(1) << 50);
    msg.start = m.time("start", 0);
    msg.traffic_class = static_cast<int>(m.integer("traffic_class", 0, traffic_classes - 1, 0));
    m.finish();
    out.push_back(std::move(msg));
  }
  return out;
}

// Applies "a.b[2].c=value" (dots, or [i] / .i for list items) to the tree.
void apply_override(YAML::Node root, const std::string& text, YamlContext& ctx) {
  const auto eq = text.find('=');
  std::vector<std::string> parts;
  std::string part;
  for (char c : text.substr(0, eq == std::string::npos ? 0 : eq)) {
    if (c == '.' || c == '[' || c == ']') {
      if (!part.empty()) parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (!part.empty()) parts.push_back(part);
  if (parts.empty()) throw ConfigError("--set " + text, "", "expected KEY.PATH=VALUE");

  const auto is_index = [](const std::string& p) { return p.find_first_not_of("0123456789") == std::string::npos; };
  std::string canonical;
  const auto step = [&](YAML::Node& node, const std::string& p, bool create) -> YAML::Node {
    if (node.IsSequence()) {
      if (!is_index(p) || std::stoul(p) >= node.size()) {
        throw ConfigError("--set " + text, canonical, "expected an item number below " + std::to_string(node.size()));
      }
      canonical += "[" + p + "]";
      return node[std::stoul(p)];
    }
    canonical += (canonical.empty() ? "" : ".") + p;
    if (create && (!node[p].IsDefined() || node[p].IsNull())) node[p] = YAML::Node(YAML::NodeType::Map);
    return node[p];
  };
  YAML::Node node = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = step(node, parts[i], true);
    node.reset(next);
  }
  YAML::Node parsed;
  try {
    parsed = YAML::Load(text.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ConfigError("--set " + text, canonical, "value is not valid YAML: " + e.msg);
  }
  YAML::Node target = step(node, parts.back(), false);
  target = parsed;
  ctx.add_override(canonical, text);
}

ScenarioConfig read_scenario(const YAML::Node& root, YamlContext& ctx, const std::string& default_name) {
  MapReader top(ctx, root, "");
  if (!root.IsMap()) ctx.fail(root, "(top level)", "expected a map with topology, network, messages, stop");
  ScenarioConfig c;
  c.file = ctx.file();
  c.name = top.string("name", default_name);
  c.seed = static_cast<std::uint64_t>(top.integer("seed", 0, INT64_MAX, 1));
  c.topology = read_topology(top.map("topology"));
  c.network = read_network(top.map("network", false));
  c.messages = read_messages(top, top.sequence("messages", false), c.network.traffic_classes);
  MapReader stop = top.map("stop", false);
  c.stop.time = stop.time("time", kTimeMax);
  c.stop.events = static_cast<std::uint64_t>(stop.integer("events", 1, INT64_MAX, INT64_MAX));
  stop.finish();
  top.finish();
  return c;
}

ScenarioConfig load(const std::string& text, const std::string& display, const std::string& default_name,
                    const std::vector<std::string>& overrides) {
  YamlContext ctx(display);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(display + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1), "",
                      "YAML syntax: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  for (const std::string& o : overrides) {
    if (!root.IsMap()) break;  // reported below as a top-level error
    try {
      apply_override(root, o, ctx);
    } catch (const YAML::Exception& e) {
      throw ConfigError("--set " + o, "", "cannot apply: " + e.msg);
    }
  }
  return read_scenario(root, ctx, default_name);
}

}  // namespace

ScenarioConfig load_config_file(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, "", "cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return load(text.str(), path, std::filesystem::path(path).stem().string(), overrides);
}

ScenarioConfig load_config_text(const std::string& text, const std::string& display_name,
                                const std::vector<std::string>& overrides) {
  return load(text, display_name, display_name, overrides);
}

const char* default_scenario_yaml() {
  return R"(# Built-in default: two leaves, two spines, four hosts per leaf, 400G everywhere.
name: default
seed: 1
topology:
  kind: leaf_spine
  leaves: 2
  spines: 2
  hosts_per_leaf: 4
  host_link: {bandwidth: 400Gbps, latency: 500ns}
  fabric_link: {bandwidth: 400Gbps, latency: 500ns}
network:
  mtu: 4KiB
  header_bytes: 64
  load_balancing: ecmp
messages:
  - {src: h0, dst: h4, bytes: 4MiB}
  - {src: h1, dst: h5, bytes: 4MiB}
  - {src: h2, dst: h6, bytes: 4MiB}
  - {src: h3, dst: h7, bytes: 4MiB}
  - {src: h4, dst: h0, bytes: 1MiB, start: 5us}
  - {src: h5, dst: h0, bytes: 1MiB, start: 5us}
)";
}

}  // namespace fabricsim
