#include "app/config/workload_config.h"

#include <set>

#include "app/workload/workload_kind.h"

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

void read_placement(MapReader& m, WorkloadConfig& w) {
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

void check_packet_count(const YamlContext& ctx, const YAML::Node& at, const std::string& path, std::int64_t bytes, std::int64_t mtu) {
  const std::int64_t most = static_cast<std::int64_t>(UINT32_MAX) * mtu;
  if (bytes > most) {
    ctx.fail(at, path,
             "expected at most " + std::to_string(most) + " bytes (2^32 - 1 packets of network.mtu = " + std::to_string(mtu) +
                 " B), got " + std::to_string(bytes));
  }
}

WorkloadConfig read_workload(MapReader m, const NetworkConfig& network) {
  WorkloadConfig w;
  if (!m.has("kind")) {
    m.finish();
    if (m.node().IsMap() && m.node().size() > 0) m.context().fail(m.node(), m.child_path("kind"), "missing required key; expected one of permutation, incast, uniform, poisson");
    return w;
  }
  std::vector<std::pair<std::string, const WorkloadKind*>> kinds;
  for (const WorkloadKind& k : workload_kinds()) kinds.emplace_back(k.name, &k);
  const WorkloadKind* kind = m.choice<const WorkloadKind*>("kind", kinds);
  w.kind = kind->name;
  w.start = m.time("start", 0);
  w.traffic_class = static_cast<int>(m.integer("traffic_class", 0, network.traffic_classes - 1, 0));
  kind->read(m, w, WorkloadReading{network.traffic_classes, network.nic.mtu});
  m.finish();
  return w;
}

}  // namespace fabricsim
