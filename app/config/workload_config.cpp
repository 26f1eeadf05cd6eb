#include "app/config/workload_config.h"

#include <filesystem>

#include "app/config/model_files.h"
#include "app/config/profile.h"
#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/nccl_tuning.h"

namespace fabricsim {

constexpr std::int64_t kMaxMessages = 10'000'000;

std::vector<MessageConfig> read_messages(const MapReader& parent, const YAML::Node& seq, int traffic_classes) {
  const YamlContext& ctx = parent.context();
  std::vector<MessageConfig> out;
  if (seq.size() > static_cast<std::size_t>(kMaxMessages)) ctx.fail(seq, "messages", "expected at most 10 million messages");
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

namespace {

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
}  // namespace

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

}  // namespace fabricsim
