#include "app/config/config_loader.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "app/config/congestion_control_config.h"
#include "app/config/profile.h"
#include "app/config/topology_config.h"
#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/nccl_tuning.h"
#include "app/config/yaml_reader.h"

namespace fabricsim {
namespace {

constexpr std::int64_t kMaxCount = 1'000'000;

// A section is on when present, unless `enabled: false`.
bool section_on(const MapReader& parent, const char* key, MapReader& section) {
  return parent.has(key) && section.boolean("enabled", true);
}

void read_lossless(MapReader& m, NetworkConfig& n) {
  LosslessConfig& l = n.lossless;
  MapReader buffer = m.map("buffer", false);
  if (section_on(m, "buffer", buffer)) {
    l.shared_buffer = true;
    l.buffer.size_bytes = buffer.bytes("size", 1, INT64_C(1) << 40, l.buffer.size_bytes);
    l.buffer.reserve_bytes = buffer.bytes("reserve", 0, INT64_C(1) << 30, 0);
    l.buffer.alpha = buffer.real("alpha", 1.0 / 1024, 1024, l.buffer.alpha);
    l.buffer.headroom_bytes = buffer.bytes("headroom", 0, INT64_C(1) << 30, 0);
    l.buffer.xon_offset_bytes = buffer.bytes("xon_offset", 0, INT64_C(1) << 30, 0);
  }
  buffer.finish();
  MapReader pfc = m.map("pfc", false);
  if (section_on(m, "pfc", pfc)) {
    if (!l.shared_buffer) m.context().fail(m.node()["pfc"], m.child_path("pfc"), "expected a `buffer` section too: PFC works on the shared buffer's accounting");
    if (pfc.has("classes")) {
      for (std::int64_t c : pfc.integer_list("classes", 0, n.traffic_classes - 1, true)) l.pfc_classes_mask |= static_cast<std::uint8_t>(1u << c);
    } else {
      pfc.integer_list("classes", 0, 7, false);
      l.pfc_classes_mask = static_cast<std::uint8_t>((1u << n.traffic_classes) - 1);  // every class
    }
  }
  pfc.finish();
  MapReader ecn = m.map("ecn", false);
  if (section_on(m, "ecn", ecn)) {
    l.ecn.enabled = true;
    l.ecn.kmin_bytes = ecn.bytes("kmin", 0, INT64_C(1) << 40, l.ecn.kmin_bytes);
    l.ecn.kmax_bytes = ecn.bytes("kmax", 1, INT64_C(1) << 40, l.ecn.kmax_bytes);
    if (l.ecn.kmax_bytes <= l.ecn.kmin_bytes) {
      m.context().fail(m.node()["ecn"]["kmax"].IsDefined() ? m.node()["ecn"]["kmax"] : m.node()["ecn"], ecn.child_path("kmax"),
                       "expected kmax above kmin (" + std::to_string(l.ecn.kmin_bytes) + " bytes)");
    }
    l.ecn.pmax = ecn.real("pmax", 0, 1, l.ecn.pmax);
    l.ecn.mark_on_dequeue = ecn.choice<bool>("mark_on", {{"enqueue", false}, {"dequeue", true}}, false);
    // Per-port-speed thresholds: each entry overrides kmin/kmax/pmax for ports of its speed.
    const YAML::Node speeds = ecn.sequence("by_speed", false);
    for (std::size_t i = 0; i < speeds.size(); ++i) {
      MapReader e(ecn.context(), speeds[i], ecn.child_path("by_speed") + "[" + std::to_string(i) + "]");
      EcnForSpeed entry{e.bandwidth("bandwidth").bits_per_second, l.ecn};
      entry.ecn.kmin_bytes = e.bytes("kmin", 0, INT64_C(1) << 40, l.ecn.kmin_bytes);
      entry.ecn.kmax_bytes = e.bytes("kmax", 1, INT64_C(1) << 40, l.ecn.kmax_bytes);
      entry.ecn.pmax = e.real("pmax", 0, 1, l.ecn.pmax);
      if (entry.ecn.kmax_bytes <= entry.ecn.kmin_bytes) {
        e.context().fail(speeds[i]["kmax"].IsDefined() ? speeds[i]["kmax"] : speeds[i], e.child_path("kmax"),
                         "expected kmax above kmin (" + std::to_string(entry.ecn.kmin_bytes) + " bytes)");
      }
      for (const EcnForSpeed& other : l.ecn_by_speed) {
        if (other.bits_per_second == entry.bits_per_second) {
          e.context().fail(speeds[i]["bandwidth"], e.child_path("bandwidth"), "expected a speed not listed before");
        }
      }
      e.finish();
      l.ecn_by_speed.push_back(entry);
    }
  }
  ecn.finish();
  l.congestion_control = read_congestion_control(m, l.ecn);
  l.retransmit_timeout = m.time("retransmit_timeout", l.retransmit_timeout);
  if (l.retransmit_timeout <= 0) m.context().fail(m.node()["retransmit_timeout"], m.child_path("retransmit_timeout"), "expected a time above zero");
  l.nack_interval = m.time("nack_interval", l.nack_interval);
  l.dateline = m.boolean("dateline", false);
  if (l.dateline && n.traffic_classes < 2) {
    m.context().fail(m.node()["dateline"], m.child_path("dateline"), "expected traffic_classes >= 2: datelines use classes 0 and 1");
  }
  l.deadlock_check_interval = m.time("deadlock_check_interval", l.deadlock_check_interval);
  l.queue_sample_interval = m.time("queue_sample_interval", 0);
}

NetworkConfig read_network(MapReader m) {
  NetworkConfig n;
  n.mtu = m.bytes("mtu", 1, 1 << 20, n.mtu);
  n.header_bytes = m.bytes("header_bytes", 0, 4096, n.header_bytes);
  n.ack_bytes = m.bytes("ack_bytes", 1, 4096, n.ack_bytes);
  n.ack_interval = m.integer("ack_interval", 1, 1 << 20, n.ack_interval);
  n.fetch_window = m.bytes("fetch_window", 1, INT64_C(1) << 30, n.fetch_window);
  if (n.fetch_window < n.mtu) {
    m.context().fail(m.node()["fetch_window"], m.child_path("fetch_window"),
                     "expected at least one packet's payload (mtu = " + std::to_string(n.mtu) + " B)");
  }
  n.traffic_classes = static_cast<int>(m.integer("traffic_classes", 1, 8, n.traffic_classes));
  n.ack_traffic_class =
      static_cast<int>(m.integer("ack_traffic_class", 0, n.traffic_classes - 1, n.traffic_classes - 1));
  n.queue_capacity = m.bytes("queue_capacity", 1, INT64_C(1) << 40, n.queue_capacity);
  if (n.queue_capacity < n.mtu + n.header_bytes) {
    m.context().fail(m.node()["queue_capacity"], m.child_path("queue_capacity"),
                     "expected at least one full packet (mtu + header_bytes = " +
                         std::to_string(n.mtu + n.header_bytes) + " bytes)");
  }
  read_lossless(m, n);
  n.load_balancing = m.choice<LoadBalancing>(
      "load_balancing",
      {{"ecmp", LoadBalancing::kEcmp}, {"spray", LoadBalancing::kSpray}, {"adaptive", LoadBalancing::kAdaptive}},
      LoadBalancing::kEcmp);
  n.fidelity = m.choice<NetworkConfig::Fidelity>(
      "fidelity", {{"packet", NetworkConfig::Fidelity::kPacket}, {"flow", NetworkConfig::Fidelity::kFlow}},
      NetworkConfig::Fidelity::kPacket);
  n.flow_rate_interval = m.time("flow_rate_interval", 0);
  n.flow_rings = m.choice<NetworkConfig::FlowRings>(
      "flow_rings",
      {{"steps", NetworkConfig::FlowRings::kSteps}, {"in_node", NetworkConfig::FlowRings::kInNode},
       {"coupled", NetworkConfig::FlowRings::kCoupled}},
      NetworkConfig::FlowRings::kSteps);
  if (m.has("nccl_version")) {
    const std::string v = m.string("nccl_version");
    if (!nccl_rules(v)) {
      std::string known;
      for (const auto& k : nccl_rule_versions()) known += (known.empty() ? "" : ", ") + k;
      m.context().fail(m.node()["nccl_version"], m.child_path("nccl_version"),
                       "expected an NCCL release from 2.18 on (rule sets: " + known + "), got '" + v + "'");
    }
    n.nccl_version = nccl_rules(v)->version;
  }
  n.cpu_amd = m.choice<bool>("cpu", {{"intel", false}, {"amd", true}}, n.cpu_amd);
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

void read_collective(MapReader& m, CollectiveConfig& c) {
  c.op = m.choice<CollectiveOp>("op", {{"all_reduce", CollectiveOp::kAllReduce}, {"reduce_scatter", CollectiveOp::kReduceScatter},
                                       {"all_gather", CollectiveOp::kAllGather}, {"broadcast", CollectiveOp::kBroadcast},
                                       {"reduce", CollectiveOp::kReduce}, {"all_to_all", CollectiveOp::kAllToAll},
                                       {"send_recv", CollectiveOp::kSendRecv}});
  std::vector<std::pair<std::string, std::string>> algorithms{{"auto", "auto"}, {"msccl", "msccl"}, {"steps", "steps"}};
  for (const auto& name : algorithm_names()) algorithms.emplace_back(name, name);
  c.algorithm = m.choice<std::string>("algorithm", algorithms, std::string("ring"));
  c.protocol_given = m.has("protocol");
  c.protocol = m.choice<std::string>("protocol", {{"none", "none"}, {"auto", "auto"}, {"simple", "simple"}, {"ll", "ll"}, {"ll128", "ll128"}},
                                     c.protocol);
  if (c.algorithm == "msccl" || c.algorithm == "steps") {
    c.file = m.string("file");
    c.file_source = m.context().source(m.node()["file"], m.child_path("file"));
  } else {
    m.string("file", std::string());
  }
  // One size, or a sweep from..to multiplying by factor (nccl-tests' -b -e -f).
  if (m.has("sizes") && m.has("bytes")) {
    m.context().fail(m.node()["bytes"], m.child_path("bytes"), "expected either bytes or sizes, not both");
  }
  if (m.has("sizes")) {
    MapReader sweep = m.map("sizes");
    const std::int64_t from = sweep.bytes("from", 1, INT64_C(1) << 40);
    const std::int64_t to = sweep.bytes("to", from, INT64_C(1) << 40);
    const std::int64_t factor = sweep.integer("factor", 2, 1024, 2);
    sweep.finish();
    for (std::int64_t b = from; b <= to; b *= factor) c.sizes.push_back(b);
  } else {
    m.map("sizes", false);
    c.sizes.push_back(m.bytes("bytes", 1, INT64_C(1) << 40));
  }
  c.ranks = static_cast<int>(m.integer("ranks", 2, 1 << 20, 0));
  c.channels = m.has("channels") ? static_cast<int>(m.integer("channels", 1, 64)) : 0;
  c.chunk_bytes = m.bytes("chunk_bytes", 0, INT64_C(1) << 40, 0);
  c.root = static_cast<int>(m.integer("root", 0, c.ranks > 0 ? c.ranks - 1 : (1 << 20), 0));
  c.local_size = static_cast<int>(m.integer("local_size", 0, 4096, 0));
  c.reduce_bytes_per_second = static_cast<double>(m.bandwidth("reduce_bandwidth", Bandwidth{1}).bits_per_second) / 8;
  if (!m.has("reduce_bandwidth")) c.reduce_bytes_per_second = 0;
  if (m.has("profile")) {
    // A measured GPU profile (calibrate gpu) sets the reduce speed unless it is written out;
    // nccl-tests reduces floats, so the fp32 figure.
    const LinkProfile profile = load_profile_key(m);
    if (!profile.reduce_GBps_fp32) m.context().fail(m.node()["profile"], m.child_path("profile"), "expected a profile with gpu.reduce_fp32");
    if (!m.has("reduce_bandwidth")) c.reduce_bytes_per_second = *profile.reduce_GBps_fp32 * 1e9;
  }
  c.check_data = m.boolean("check_data", true);
}

// stragglers: [{rank: R, compute: FACTOR}]
std::vector<StragglerConfig> read_stragglers(const MapReader& m, const YAML::Node& slow) {
  std::vector<StragglerConfig> out;
  for (std::size_t i = 0; i < slow.size(); ++i) {
    const std::string path = m.child_path("stragglers") + "[" + std::to_string(i) + "]";
    if (!slow[i].IsMap()) m.context().fail(slow[i], path, "expected a map {rank: R, compute: FACTOR}");
    MapReader r(m.context(), slow[i], path);
    StragglerConfig st;
    if (r.has("fraction")) {
      if (r.has("rank")) m.context().fail(slow[i]["rank"], r.child_path("rank"), "expected either rank or fraction, not both");
      st.fraction = r.real("fraction", 0.0, 1.0);
      st.seed = static_cast<std::uint64_t>(r.integer("seed", 0, INT64_MAX, 1));
    } else {
      st.rank = static_cast<int>(r.integer("rank", 0, 1 << 24));
    }
    st.compute = r.real("compute", 0.01, 1000.0);
    st.compute_max = r.real("compute_max", st.compute, 1000.0, st.compute);
    st.source = m.context().source(slow[i], path);
    r.finish();
    out.push_back(st);
  }
  return out;
}

WorkloadConfig read_workload(MapReader m, int traffic_classes) {
  WorkloadConfig w;
  if (!m.has("kind")) {
    m.finish();
    if (m.node().IsMap() && m.node().size() > 0) m.context().fail(m.node(), m.child_path("kind"), "missing required key; expected one of permutation, incast, uniform, poisson");
    return w;
  }
  using K = WorkloadConfig::Kind;
  w.kind = m.choice<K>("kind", {{"permutation", K::kPermutation}, {"incast", K::kIncast}, {"uniform", K::kUniform},
                                {"poisson", K::kPoisson}, {"collective", K::kCollective}, {"trace", K::kTrace}, {"chakra", K::kChakra}});
  w.start = m.time("start", 0);
  w.traffic_class = static_cast<int>(m.integer("traffic_class", 0, traffic_classes - 1, 0));
  if (w.kind == K::kCollective || w.kind == K::kTrace || w.kind == K::kChakra) {
    w.placement = m.string_list("placement", false);
    const YAML::Node items = m.node()["placement"];
    std::set<std::string> seen;
    for (std::size_t i = 0; i < w.placement.size(); ++i) {
      const std::string path = m.child_path("placement") + "[" + std::to_string(i) + "]";
      if (!seen.insert(w.placement[i]).second) {
        m.context().fail(items[i], path, "expected each endpoint once, got '" + w.placement[i] + "' again");
      }
      w.placement_sources.push_back(m.context().source(items[i], path));
    }
  }
  if (w.kind == K::kCollective) {
    read_collective(m, w.collective);
    if (!w.placement.empty()) {
      if (w.placement.size() < 2) m.context().fail(m.node()["placement"], m.child_path("placement"), "expected at least two endpoints");
      if (w.collective.ranks != 0 && w.collective.ranks != static_cast<int>(w.placement.size())) {
        m.context().fail(m.node()["ranks"], m.child_path("ranks"),
                         "expected " + std::to_string(w.placement.size()) + " (the endpoints in `placement`), or leave it out");
      }
      w.collective.ranks = static_cast<int>(w.placement.size());
    }
  } else if (w.kind == K::kTrace || w.kind == K::kChakra) {
    const char* key = w.kind == K::kChakra ? "prefix" : "file";
    if (w.kind == K::kTrace && m.has("generate")) {
      if (m.has("file")) m.context().fail(m.node()["file"], m.child_path("file"), "expected either file or generate, not both");
      MapReader g = m.map("generate");
      w.trace.generate = true;
      w.trace.file_source = m.context().source(m.node()["generate"], m.child_path("generate"));
      w.trace.model_file = resolve_config_path(g.context(), g.string("model"));
      w.trace.model_source = g.context().source(g.node()["model"], g.child_path("model"));
      w.trace.gpu_file = resolve_config_path(g.context(), g.string("gpu"));
      w.trace.gpu_source = g.context().source(g.node()["gpu"], g.child_path("gpu"));
      w.trace.tp = static_cast<int>(g.integer("tp", 1, 1 << 16, 1));
      w.trace.pp = static_cast<int>(g.integer("pp", 1, 1 << 16, 1));
      w.trace.dp = static_cast<int>(g.integer("dp", 1, 1 << 20, 1));
      w.trace.ep = static_cast<int>(g.integer("ep", 1, 1 << 16, 1));
      w.trace.microbatches = static_cast<int>(g.integer("microbatches", 1, 1 << 16, 1));
      w.trace.bucket_bytes = g.bytes("bucket", 1, INT64_C(1) << 40, w.trace.bucket_bytes);
      w.trace.zero = g.boolean("zero", false);
      g.finish();
    } else {
      w.trace.file = m.string(key);
      w.trace.file_source = m.context().source(m.node()[key], m.child_path(key));
    }
    if (w.kind == K::kChakra) {
      w.trace.chakra = true;
      w.trace.chakra_ranks = static_cast<int>(m.integer("ranks", 1, 1 << 20));
      MapReader groups = m.map("process_groups", false);
      if (m.has("process_groups")) {
        for (const auto& item : m.node()["process_groups"]) {
          const std::string name = item.first.as<std::string>();
          std::vector<int> ranks;
          for (std::int64_t r : groups.integer_list(name, 0, w.trace.chakra_ranks - 1, true)) ranks.push_back(static_cast<int>(r));
          if (ranks.empty()) m.context().fail(item.second, groups.child_path(name), "expected at least one rank");
          w.trace.process_groups[name] = std::move(ranks);
        }
      }
      groups.finish();
    }
    w.trace.ideal_network = m.choice<bool>("network", {{"packet", false}, {"ideal", true}}, false);
    std::vector<std::pair<std::string, std::string>> algorithms{{"auto", "auto"}};
    for (const auto& name : algorithm_names()) algorithms.emplace_back(name, name);
    w.trace.algorithm = m.choice<std::string>("algorithm", algorithms, std::string("ring"));
    w.trace.channels = static_cast<int>(m.integer("channels", 1, 64, 1));
    w.trace.stragglers = read_stragglers(m, m.sequence("stragglers", false));
  } else if (w.kind == K::kPoisson) {
    w.load = m.real("load", 0.001, 1.0);
    w.flow_size_cdf = m.string("flow_size_cdf");
    w.cdf_source = m.context().source(m.node()["flow_size_cdf"], m.child_path("flow_size_cdf"));
    w.duration = m.time("duration");
    if (w.duration <= 0) m.context().fail(m.node()["duration"], m.child_path("duration"), "expected a time above zero");
  } else {
    w.bytes = m.bytes("bytes", 1, INT64_C(1) << 40);
  }
  if (w.kind == K::kIncast) {
    w.receiver = m.string("receiver", std::string());
    if (!w.receiver.empty()) w.receiver_source = m.context().source(m.node()["receiver"], m.child_path("receiver"));
    w.senders = static_cast<int>(m.integer("senders", 1, 1 << 20, 0));
  }
  if (w.kind == K::kUniform) w.flows = static_cast<int>(m.integer("flows", 1, 10'000'000));
  m.finish();
  return w;
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
std::vector<JobConfig> read_jobs(const YamlContext& ctx, const YAML::Node& seq, int traffic_classes) {
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
    j.workload = read_workload(m.map("workload"), traffic_classes);
    if (j.workload.kind != WorkloadConfig::Kind::kCollective) {
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
  c.workload = read_workload(top.map("workload", false), c.network.traffic_classes);
  c.faults = read_faults(top.context(), top.sequence("faults", false), "faults");
  c.jobs = read_jobs(top.context(), top.sequence("jobs", false), c.network.traffic_classes);
  c.whatif = read_whatif(top.context(), top.sequence("whatif", false));
  if (!c.jobs.empty() && c.workload.kind != WorkloadConfig::Kind::kNone) {
    ctx.fail(root["jobs"], "jobs", "expected either `workload` or `jobs`, not both (a job has its own workload)");
  }
  MapReader stop = top.map("stop", false);
  c.stop.time = stop.time("time", kTimeMax);
  c.stop.events = static_cast<std::uint64_t>(stop.integer("events", 1, INT64_MAX, INT64_MAX));
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
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(display + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1), "",
                      "YAML syntax: " + e.msg);
  }
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
