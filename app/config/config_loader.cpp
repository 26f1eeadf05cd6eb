#include "app/config/config_loader.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "app/config/did_you_mean.h"
#include "app/config/network_config.h"
#include "app/config/profile.h"
#include "app/config/topology_config.h"
#include "app/config/yaml_safety.h"
#include "app/config/workload_config.h"
#include "app/config/yaml_reader.h"

namespace fabricsim {
namespace {

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

  // An item number: digits only, and short enough to be one (a 20-digit one is not).
  const auto is_index = [](const std::string& p) {
    return !p.empty() && p.size() <= 9 && p.find_first_not_of("0123456789") == std::string::npos;
  };
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
  check_yaml_structure(parsed, "--set " + text);
  YAML::Node target = step(node, parts.back(), false);
  target = parsed;
  ctx.add_override(canonical, text);
}

std::vector<FaultConfig> read_faults(const YamlContext& ctx, const YAML::Node& seq, const std::string& where);

// whatif: [{name, faults: [...], stragglers: [...]}]
std::vector<WhatIfConfig> read_whatif(const YamlContext& ctx, const YAML::Node& seq) {
  std::vector<WhatIfConfig> out;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const std::string path = "whatif[" + std::to_string(i) + "]";
    if (!seq[i].IsMap()) ctx.fail(seq[i], path, "expected a map with name and faults and/or stragglers");
    MapReader m(ctx, seq[i], path);
    WhatIfConfig w;
    w.source = ctx.source(seq[i], path);
    w.name = m.string("name");
    // Faults read as the top level's are, their paths under this scenario.
    const YAML::Node faults = m.sequence("faults", false);
    w.faults = read_faults(ctx, faults, path + ".faults");
    w.stragglers = read_stragglers(m, m.sequence("stragglers", false));
    if (w.faults.empty() && w.stragglers.empty()) ctx.fail(seq[i], path, "expected faults or stragglers (what changes)");
    m.finish();
    out.push_back(std::move(w));
  }
  return out;
}

// jobs: [{name, ranks, placement: packed | spread | random | [names], seed, workload: {...}}]
std::vector<JobConfig> read_jobs(const YamlContext& ctx, const YAML::Node& seq, const NetworkConfig& network) {
  std::vector<JobConfig> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const std::string path = "jobs[" + std::to_string(i) + "]";
    if (!seq[i].IsMap()) ctx.fail(seq[i], path, "expected a map with name, ranks, placement and workload");
    MapReader m(ctx, seq[i], path);
    JobConfig j;
    j.source = ctx.source(seq[i], path);
    j.name = m.string("name", "job" + std::to_string(i));
    if (!names.insert(j.name).second) ctx.fail(seq[i]["name"], m.child_path("name"), "expected a name no other job has");
    const YAML::Node place = seq[i]["placement"];
    if (place && place.IsSequence()) {
      j.placement = JobConfig::Placement::kList;
      j.hosts = m.string_list("placement", true);
      j.ranks = static_cast<int>(m.integer("ranks", 1, 1 << 24, static_cast<std::int64_t>(j.hosts.size())));
      if (j.ranks != static_cast<int>(j.hosts.size())) {
        ctx.fail(seq[i]["ranks"], m.child_path("ranks"), "expected as many ranks as placement names (" + std::to_string(j.hosts.size()) + ")");
      }
    } else {
      j.placement = m.choice<JobConfig::Placement>("placement",
                                                   {{"packed", JobConfig::Placement::kPacked},
                                                    {"spread", JobConfig::Placement::kSpread},
                                                    {"random", JobConfig::Placement::kRandom}},
                                                   JobConfig::Placement::kPacked);
      j.ranks = static_cast<int>(m.integer("ranks", 1, 1 << 24));
    }
    j.seed = static_cast<std::uint64_t>(m.integer("seed", 0, INT64_MAX, 1));
    j.workload = read_workload(m.map("workload"), network);
    if (!j.workload.is("collective")) {
      ctx.fail(seq[i]["workload"]["kind"], m.child_path("workload.kind"), "expected collective: jobs run collectives for now");
    }
    if (!j.workload.placement.empty()) {
      ctx.fail(seq[i]["workload"]["placement"], m.child_path("workload.placement"), "expected the job's placement at the job's level");
    }
    j.workload.collective.ranks = j.ranks;
    m.finish();
    out.push_back(std::move(j));
  }
  return out;
}

// faults: [{link: [A, B] | switch: S | tier: T (fraction, seed), down | bandwidth | extra_latency}]
std::vector<FaultConfig> read_faults(const YamlContext& ctx, const YAML::Node& seq, const std::string& where) {
  std::vector<FaultConfig> out;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const std::string path = where + "[" + std::to_string(i) + "]";
    const char* shape = "expected a map naming one of link: [A, B], switch: NAME or tier: NAME, and what happens: "
                        "down: true, bandwidth: RATE or extra_latency: TIME";
    if (!seq[i].IsMap()) ctx.fail(seq[i], path, shape);
    MapReader m(ctx, seq[i], path);
    FaultConfig f;
    f.source = ctx.source(seq[i], path);
    const int targets = (m.has("link") ? 1 : 0) + (m.has("switch") ? 1 : 0) + (m.has("tier") ? 1 : 0);
    if (targets != 1) ctx.fail(seq[i], path, shape);
    if (m.has("link")) {
      const std::vector<std::string> ends = m.string_list("link", true);
      if (ends.size() != 2) ctx.fail(seq[i]["link"], m.child_path("link"), "expected the link's two ends, [A, B]");
      f.spec.target = FaultSpec::Target::kLink;
      f.spec.a = ends[0];
      f.spec.b = ends[1];
    } else if (m.has("switch")) {
      f.spec.target = FaultSpec::Target::kSwitch;
      f.spec.node = m.string("switch");
    } else {
      f.spec.target = FaultSpec::Target::kTier;
      f.spec.tier = m.string("tier");
      f.spec.fraction = m.real("fraction", 0.0, 1.0, 1.0);
      f.spec.seed = static_cast<std::uint64_t>(m.integer("seed", 0, INT64_MAX, 1));
    }
    f.spec.down = m.boolean("down", false);
    if (m.has("bandwidth")) f.spec.bandwidth = m.bandwidth("bandwidth");
    if (f.spec.bandwidth && f.spec.bandwidth->bits_per_second <= 0) {
      ctx.fail(seq[i]["bandwidth"], m.child_path("bandwidth"), "expected a bandwidth above zero (down: true takes a link out)");
    }
    f.spec.extra_latency = m.time("extra_latency", 0);
    f.spec.at = m.has("at") ? m.time("at") : -1;
    f.spec.detection = m.time("detection", FaultSpec::kDefaultDetection);
    if (!f.spec.down && !f.spec.bandwidth && f.spec.extra_latency == 0) ctx.fail(seq[i], path, shape);
    if (f.spec.down && (f.spec.bandwidth || f.spec.extra_latency != 0)) {
      ctx.fail(seq[i]["down"], m.child_path("down"), "expected either down: true or a degradation, not both");
    }
    m.finish();
    out.push_back(std::move(f));
  }
  return out;
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
  c.workload = read_workload(top.map("workload", false), c.network);
  c.faults = read_faults(top.context(), top.sequence("faults", false), "faults");
  c.jobs = read_jobs(top.context(), top.sequence("jobs", false), c.network);
  c.whatif = read_whatif(top.context(), top.sequence("whatif", false));
  if (!c.jobs.empty() && !c.workload.kind.empty()) {
    ctx.fail(root["jobs"], "jobs", "expected either `workload` or `jobs`, not both (a job has its own workload)");
  }
  for (std::size_t i = 0; i < c.messages.size(); ++i) {
    const YAML::Node at = root["messages"][i]["bytes"];
    check_packet_count(ctx, at, "messages[" + std::to_string(i) + "].bytes", c.messages[i].bytes, c.network.nic.mtu);
  }
  MapReader stop = top.map("stop", false);
  c.stop.time = stop.time("time", kTimeMax);
  c.stop.events = static_cast<std::uint64_t>(stop.integer("events", 1, INT64_MAX, INT64_MAX));
  c.stop.frozen_events = static_cast<std::uint64_t>(
      stop.integer("frozen_events", 0, INT64_MAX, static_cast<std::int64_t>(c.stop.frozen_events)));
  c.stop.undelivered_events = static_cast<std::uint64_t>(
      stop.integer("undelivered_events", 0, INT64_MAX, static_cast<std::int64_t>(c.stop.undelivered_events)));
  stop.finish();
  top.finish();
  return c;
}

// YAML says a map's keys are unique; yaml-cpp keeps both and finds the first, so a second
// `mtu:` would be silently ignored. Refused, at the second one.
void reject_duplicate_keys(const YAML::Node& node, const std::string& path, const YamlContext& ctx) {
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& item : node) {
      const std::string key = item.first.IsScalar() ? item.first.Scalar() : std::string();
      const std::string child = path.empty() ? key : path + "." + key;
      if (item.first.IsScalar() && !seen.insert(key).second) {
        ctx.fail(item.first, child, "this key appears twice in the same map; expected each key once");
      }
      reject_duplicate_keys(item.second, child, ctx);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) reject_duplicate_keys(node[i], path + "[" + std::to_string(i) + "]", ctx);
  }
}

ScenarioConfig load(const std::string& text, const std::string& display, const std::string& default_name,
                    const std::vector<std::string>& overrides) {
  YamlContext ctx(display);
  YAML::Node root = parse_yaml(text, display);
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  reject_duplicate_keys(root, "", ctx);
  for (const std::string& o : overrides) {
    if (!root.IsMap()) break;  // reported below as a top-level error
    try {
      apply_override(root, o, ctx);
    } catch (const YAML::Exception& e) {
      throw ConfigError("--set " + o, "", "cannot apply: " + e.msg);
    }
  }
  if (!overrides.empty()) check_yaml_structure(root, display);  // a --set value may hold aliases too
  ScenarioConfig c = read_scenario(root, ctx, default_name);
  // What ran, for the record: the tree after --set, and its FNV-1a hash.
  YAML::Emitter emitted;
  emitted << root;
  c.effective = emitted.c_str();
  c.overrides = overrides;
  c.hash = 14695981039346656037ull;
  for (unsigned char ch : c.effective) c.hash = (c.hash ^ ch) * 1099511628211ull;
  return c;
}

}  // namespace

ScenarioConfig load_config_file(const std::string& path, const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw ConfigError(path, "", "is a directory; expected a YAML config file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, "", "cannot read the file" + file_suggestion(path));
  std::ostringstream text;
  text << in.rdbuf();
  return load(text.str(), path, std::filesystem::path(path).stem().string(), overrides);
}

ScenarioConfig load_config_text(const std::string& text, const std::string& display_name,
                                const std::vector<std::string>& overrides) {
  return load(text, display_name, display_name, overrides);
}

const char* default_scenario_yaml() {
  // The same as configs/dgx_h100_2node_allreduce.yaml (a test keeps them in step).
  return R"(# Two DGX H100 nodes (8 GPUs and 8 ConnectX-7 400G NICs each) on a rail-optimized fabric,
# ring AllReduce over all 16 GPUs from 1 MiB to 1 GiB, like nccl-tests' all_reduce_perf.
name: default
topology:
  kind: cluster
  nodes: 2
  node: {preset: dgx_h100}
  nics_per_node: 8
  pcie: {bandwidth: 64GBps, latency: 500ns}
  nic: {bandwidth: 400Gbps, latency: 500ns, kind: infiniband}   # ConnectX-7 on Quantum-2: credit-based, lossless
  fabric:
    kind: rail_optimized
    spines: 2
    fabric_link: {bandwidth: 400Gbps, latency: 500ns}
network:
  mtu: 4KiB
workload:
  kind: collective
  op: all_reduce
  algorithm: ring
  channels: 8          # one ring per NIC, as NCCL spreads its channels over a node's NICs
  sizes: {from: 1MiB, to: 1GiB, factor: 2}
  check_data: false
)";
}

}  // namespace fabricsim
