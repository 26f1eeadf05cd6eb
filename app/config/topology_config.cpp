#include "app/config/topology_config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "app/config/profile.h"
#include "sim/core/units.h"

namespace fabricsim {
namespace {

// A measured profile's NVLink figures: its bandwidth is per GPU, spread over the GPU's links.
void apply_nvlink_profile(NvSwitchSpec& s, const LinkSpec& nvlink) {
  s.nvlink_bandwidth = Bandwidth{nvlink.bandwidth.bits_per_second / std::max(1, s.links_per_gpu())};
  s.nvlink_data_fraction = 1.0;  // a measured rate is already data
  s.latency = nvlink.latency;
}

// A profile's NVLS figures: the switch layer's reduction rate, the start-up cost and,
// where fitted, the kernel's pipeline fill.
void apply_nvls_profile(NvSwitchSpec& s, const LinkProfile& profile) {
  s.nvls_bandwidth = profile.nvls->bandwidth;
  s.nvls_latency = profile.nvls->latency;
  if (profile.nvls_fill_rounds) s.nvls_fill_rounds = *profile.nvls_fill_rounds;
  if (profile.nvls_head_cost) s.nvls_head_cost = *profile.nvls_head_cost;
}

// A link's latency: at least 1 ns, as every link's latency is the lookahead a parallel
// run works ahead by (SST's rule); zero would make components meet without a link.
Time read_latency(MapReader& m, const std::string& key, Time fallback) {
  const Time t = m.time(key, fallback);
  if (t < ns(1)) {
    m.context().fail(m.node()[key].IsDefined() ? m.node()[key] : m.node(), m.child_path(key),
                     "expected a latency of at least 1ns (every link's latency is the lookahead of a parallel run), got " +
                         format_time(t));
  }
  return t;
}

// A link's kind and credits; `pcie` links are always credit-based (they have no `kind`).
void read_flow_control(MapReader& m, LinkSpec& l, bool pcie = false) {
  if (!pcie) {
    l.flow_control = m.choice<FlowControl>("kind", {{"ethernet", FlowControl::kNone}, {"infiniband", FlowControl::kCredit}},
                                           l.flow_control);
  }
  if (m.has("credits") && l.flow_control != FlowControl::kCredit) {
    m.context().fail(m.node()["credits"], m.child_path("credits"),
                     "expected `kind: infiniband` beside it: credits are for credit-based links");
  }
  l.credit_bytes = m.bytes("credits", 1, INT64_C(1) << 40, l.credit_bytes);
}

// Keys left out take `base`'s values (bandwidth only if `bandwidth_known`).
LinkSpec read_link(MapReader m, const LinkSpec& base, bool bandwidth_known, bool pcie = false) {
  LinkSpec l = base;
  l.bandwidth = m.bandwidth("bandwidth", bandwidth_known ? std::optional<Bandwidth>(base.bandwidth) : std::nullopt);
  l.latency = read_latency(m, "latency", base.latency);
  read_flow_control(m, l, pcie);
  m.finish();
  return l;
}

LinkSpec read_link(MapReader m, std::optional<Bandwidth> bandwidth = std::nullopt, Time latency = ns(500), bool pcie = false) {
  LinkSpec base;
  base.latency = latency;
  if (pcie) base.flow_control = FlowControl::kCredit;
  if (bandwidth) base.bandwidth = *bandwidth;
  return read_link(std::move(m), base, bandwidth.has_value(), pcie);
}

// The leaf-to-spine link from `fabric_link` and/or `oversubscription`; they must agree.
template <typename Spec, typename Ratio, typename Derive>
void read_fabric_link(MapReader& m, Spec& spec, LinkSpec& fabric_link, Ratio ratio_of, Derive bandwidth_for) {
  // (Indexing a const node by a key it lacks gives an invalid node that throws when asked.)
  const YAML::Node link = m.has("fabric_link") ? m.node()["fabric_link"] : YAML::Node();
  const bool has_link_bw = link.IsMap() && link["bandwidth"].IsDefined() && !link["bandwidth"].IsNull();
  const bool has_ratio = m.has("oversubscription");
  const double ratio = has_ratio ? m.real("oversubscription", 0.01, 1000) : 1.0;
  fabric_link = read_link(m.map("fabric_link", false), Bandwidth{1});
  if (!has_link_bw) {
    fabric_link.bandwidth = bandwidth_for(spec, ratio);
  } else if (has_ratio && std::fabs(ratio_of(spec) - ratio) > 1e-9 * ratio) {
    char text[160];
    std::snprintf(text, sizeof text, "expected %g to match fabric_link.bandwidth (or leave one of them out), got %g",
                  ratio_of(spec), ratio);
    m.context().fail(m.node()["oversubscription"], m.child_path("oversubscription"), text);
  }
}

void read_leaf_spine(MapReader& m, LeafSpineSpec& s, bool with_host_link, std::optional<int> hosts = std::nullopt) {
  s.hosts_per_leaf = static_cast<int>(m.integer("hosts_per_leaf", 1, 4096));
  if (hosts) {
    const int needed = (*hosts + s.hosts_per_leaf - 1) / s.hosts_per_leaf;
    s.leaves = static_cast<int>(m.integer("leaves", needed, 4096, needed));
  } else {
    s.leaves = static_cast<int>(m.integer("leaves", 1, 4096));
  }
  s.spines = static_cast<int>(m.integer("spines", 1, 4096));
  s.links_per_pair = static_cast<int>(m.integer("links_per_pair", 1, 64, 1));
  if (with_host_link) s.host_link = read_link(m.map("host_link"));
  read_fabric_link(m, s, s.fabric_link, leaf_spine_oversubscription, fabric_bandwidth_for);
}

int read_even_k(MapReader& m) {
  const auto k = m.integer("k", 2, 64);
  if (k % 2 != 0) m.context().fail(m.node()["k"], m.child_path("k"), "expected an even integer from 2 to 64, got " + std::to_string(k));
  return static_cast<int>(k);
}

void read_fat_tree(MapReader& m, FatTreeSpec& s, bool with_host_link, std::optional<int> hosts = std::nullopt) {
  s.k = read_even_k(m);
  if (hosts && fat_tree_hosts(s.k) < *hosts) {
    m.context().fail(m.node()["k"], m.child_path("k"),
                     "expected k with k^3/4 >= " + std::to_string(*hosts) + " endpoints, got k = " + std::to_string(s.k));
  }
  if (with_host_link) s.host_link = read_link(m.map("host_link"));
  s.edge_link = read_link(m.map("fabric_link"));
  s.core_link = m.has("core_link") ? read_link(m.map("core_link"), s.edge_link, true) : s.edge_link;
  if (!m.has("core_link")) m.map("core_link", false);
}

void read_torus(MapReader& m, Torus3dSpec& s, bool with_host_link, std::optional<int> hosts = std::nullopt) {
  const auto dims = m.integer_list("dims", 1, 64, true);
  if (dims.size() != 3) m.context().fail(m.node()["dims"], m.child_path("dims"), "expected a list of three sizes [X, Y, Z]");
  for (std::size_t d = 0; d < 3; ++d) s.dims[d] = static_cast<int>(dims[d]);
  const LinkSpec all = read_link(m.map("link"));
  const char* keys[3] = {"link_x", "link_y", "link_z"};
  for (int d = 0; d < 3; ++d) {
    s.dim_links[d] = m.has(keys[d]) ? read_link(m.map(keys[d]), all, true) : all;
    if (!m.has(keys[d])) m.map(keys[d], false);
  }
  s.hosts_per_switch = static_cast<int>(m.integer("hosts_per_switch", 1, 64, 1));
  if (with_host_link) s.host_link = read_link(m.map("host_link"));
  if (hosts && s.dims[0] * s.dims[1] * s.dims[2] * s.hosts_per_switch < *hosts) {
    m.context().fail(m.node()["dims"], m.child_path("dims"),
                     "expected room for " + std::to_string(*hosts) + " endpoints (X*Y*Z*hosts_per_switch)");
  }
}

void read_rail(MapReader& m, RailOptimizedSpec& s, bool standalone) {
  if (standalone) {
    s.nodes = static_cast<int>(m.integer("nodes", 1, 65536));
    s.rails = static_cast<int>(m.integer("rails", 1, 64));
    s.nic_link = read_link(m.map("nic_link"));
  }
  s.spines = static_cast<int>(m.integer("spines", 1, 4096));
  s.links_per_pair = static_cast<int>(m.integer("links_per_pair", 1, 64, 1));
  s.nodes_per_leaf = static_cast<int>(m.integer("nodes_per_leaf", 1, 65536, s.nodes));
  if (s.nodes_per_leaf >= s.nodes) s.nodes_per_leaf = 0;
  s.cores = static_cast<int>(m.integer("cores", 0, 65536, 0));
  if (m.has("sharp")) {
    MapReader sharp = m.map("sharp");
    s.sharp_bandwidth = sharp.bandwidth("bandwidth");
    sharp.finish();
  }
  if (s.units() > 1 && (s.cores < s.spines || s.cores % s.spines != 0)) {
    m.context().fail(m.has("cores") ? m.node()["cores"] : m.node()["nodes_per_leaf"], m.child_path("cores"),
                     "expected a multiple of spines (" + std::to_string(s.spines) + ") when nodes_per_leaf splits the " +
                         std::to_string(s.nodes) + " nodes into " + std::to_string(s.units()) + " units");
  }
  read_fabric_link(
      m, s, s.fabric_link, [](const RailOptimizedSpec& r) { return leaf_spine_oversubscription(as_leaf_spine(r)); },
      [](const RailOptimizedSpec& r, double ratio) { return fabric_bandwidth_for(as_leaf_spine(r), ratio); });
}

NvSwitchSpec read_nvswitch(MapReader& m) {
  NvSwitchSpec s;
  std::vector<std::pair<std::string, std::string>> presets;
  for (const auto& name : nvswitch_preset_names()) presets.emplace_back(name, name);
  const bool preset = m.has("preset");
  if (preset) s = *nvswitch_preset(m.choice<std::string>("preset", presets));
  s.gpus = static_cast<int>(m.integer("gpus", 2, 4096, preset ? std::optional<std::int64_t>(s.gpus) : std::nullopt));
  s.switches = static_cast<int>(m.integer("switches", 1, 1024, preset ? std::optional<std::int64_t>(s.switches) : std::nullopt));
  if (m.has("links_per_switch")) {
    if (m.node()["links_per_switch"].IsScalar()) {
      s.links_per_switch.assign(static_cast<std::size_t>(s.switches), static_cast<int>(m.integer("links_per_switch", 1, 64)));
    } else {
      const auto links = m.integer_list("links_per_switch", 0, 64, true);
      if (links.size() != static_cast<std::size_t>(s.switches)) {
        m.context().fail(m.node()["links_per_switch"], m.child_path("links_per_switch"),
                         "expected one entry per switch (" + std::to_string(s.switches) + ")");
      }
      s.links_per_switch.assign(links.begin(), links.end());
    }
  } else {
    m.sequence("links_per_switch", false);
    if (!preset || s.links_per_switch.size() != static_cast<std::size_t>(s.switches)) {
      s.links_per_switch.assign(static_cast<std::size_t>(s.switches), 1);
    }
  }
  const bool profiled = m.has("profile");
  s.nvlink_bandwidth = m.bandwidth("nvlink_bandwidth", preset || profiled ? std::optional<Bandwidth>(s.nvlink_bandwidth) : std::nullopt);
  s.nvlink_data_fraction = m.real("nvlink_data_fraction", 0.01, 1.0, s.nvlink_data_fraction);
  s.latency = read_latency(m, "latency", s.latency);
  s.compute_capability = static_cast<int>(m.integer("compute_capability", 70, 120, s.compute_capability));
  if (profiled) {
    const LinkProfile profile = load_profile_key(m);
    if (!profile.nvlink && !profile.nvls && !profile.p2p) {
      m.context().fail(m.node()["profile"], m.child_path("profile"), "expected a profile with an nvlink, nvls or p2p entry");
    }
    if (profile.nvlink) apply_nvlink_profile(s, *profile.nvlink);
    if (profile.nvls) apply_nvls_profile(s, profile);
    if (profile.p2p) s.p2p = *profile.p2p;
  } else {
    m.string("profile", std::string());
  }
  // NVLink SHARP: `nvls: {bandwidth, latency, fill_rounds, head_cost}` sets it, `nvls: false` turns it off.
  if (m.has("nvls") && m.node()["nvls"].IsScalar()) {
    if (!m.boolean("nvls")) s.nvls_bandwidth = Bandwidth{0};
    else if (s.nvls_bandwidth.bits_per_second == 0) {
      m.context().fail(m.node()["nvls"], m.child_path("nvls"), "expected {bandwidth: ..., latency: ...}: this NVSwitch has no NVLS figures to turn on");
    }
  } else if (m.has("nvls")) {
    MapReader nvls = m.map("nvls");
    s.nvls_bandwidth = nvls.bandwidth("bandwidth", s.nvls_bandwidth.bits_per_second > 0 ? std::optional<Bandwidth>(s.nvls_bandwidth) : std::nullopt);
    s.nvls_latency = nvls.time("latency", s.nvls_latency);
    s.nvls_fill_rounds = nvls.real("fill_rounds", 0, 1e6, s.nvls_fill_rounds);
    s.nvls_head_cost = read_nvls_head_cost(nvls, s.nvls_head_cost);
    nvls.finish();
  }
  // NCCL's p2p kernel: `p2p: {bandwidth, ll_bandwidth, latency, ll_latency, drain_bandwidth, launch}`.
  if (m.has("p2p")) {
    MapReader p2p = m.map("p2p");
    s.p2p = read_p2p_kernel(p2p, s.p2p);
  }
  if (s.links_per_gpu() == 0) m.context().fail(m.node(), m.path(), "expected at least one NVLink per GPU");
  return s;
}

void read_custom(MapReader& m, CustomTopologyConfig& c) {
  const YamlContext& ctx = m.context();
  std::set<std::string> names;
  const auto add_names = [&](const char* key, std::vector<std::string>& out, bool required) {
    out = m.string_list(key, required);
    const YAML::Node seq = m.node()[key];
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (!names.insert(out[i]).second) {
        ctx.fail(seq[i], m.child_path(key) + "[" + std::to_string(i) + "]", "expected a name not used before, got '" + out[i] + "' again");
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
    l.link.latency = read_latency(lm, "latency", ns(500));
    read_flow_control(lm, l.link);
    lm.finish();
    c.links.push_back(std::move(l));
  }
}

void inherit_kind(const YAML::Node& fabric, const char* key, LinkSpec& link, const LinkSpec& nic) {
  if (fabric[key].IsMap() && fabric[key]["kind"].IsDefined()) return;
  link.flow_control = nic.flow_control;
}

void inherit_link_kind(const YAML::Node& f, RailOptimizedSpec& s, const LinkSpec& nic) { inherit_kind(f, "fabric_link", s.fabric_link, nic); }
void inherit_link_kind(const YAML::Node& f, LeafSpineSpec& s, const LinkSpec& nic) { inherit_kind(f, "fabric_link", s.fabric_link, nic); }
void inherit_link_kind(const YAML::Node& f, FatTreeSpec& s, const LinkSpec& nic) {
  inherit_kind(f, "fabric_link", s.edge_link, nic);
  inherit_kind(f, f["core_link"].IsDefined() ? "core_link" : "fabric_link", s.core_link, nic);
}
void inherit_link_kind(const YAML::Node& f, Torus3dSpec& s, const LinkSpec& nic) {
  const char* keys[3] = {"link_x", "link_y", "link_z"};
  for (int d = 0; d < 3; ++d) inherit_kind(f, f[keys[d]].IsDefined() ? keys[d] : "link", s.dim_links[static_cast<std::size_t>(d)], nic);
}

void read_cluster(MapReader& m, ClusterSpec& c) {
  c.nodes = static_cast<int>(m.integer("nodes", 1, 65536));
  // A cluster-wide profile sets NVLink (unless the node names its own), PCIe and the NIC;
  // figures written out in the config still win over it for PCIe and the NIC.
  std::optional<LinkProfile> profile;
  if (m.has("profile")) profile = load_profile_key(m);
  MapReader node = m.map("node");
  c.node = read_nvswitch(node);
  if (profile && profile->nvlink && !node.has("profile")) apply_nvlink_profile(c.node, *profile->nvlink);
  if (profile && profile->nvls && !node.has("profile") && !node.has("nvls")) apply_nvls_profile(c.node, *profile);
  if (profile && profile->p2p && !node.has("profile") && !node.has("p2p")) c.node.p2p = *profile->p2p;
  node.finish();
  c.nics_per_node = static_cast<int>(m.integer("nics_per_node", 1, c.node.gpus, c.node.gpus));
  c.nic_ports = static_cast<int>(m.integer("nic_ports", 1, 8, c.nic_ports));
  c.rdma_nics = m.choice<bool>("nic_model", {{"relay", false}, {"rdma", true}}, true);
  if (profile && profile->pcie) {
    const Time latency = c.pcie.latency;
    c.pcie = *profile->pcie;
    if (!profile->pcie_latency_given) c.pcie.latency = latency;  // a bandwidth-only profile keeps the default latency
  }
  c.pcie = read_link(m.map("pcie", false), c.pcie.bandwidth, c.pcie.latency, /*pcie=*/true);
  if (profile && profile->nic) {
    c.nic_link = read_link(m.map("nic", false), profile->nic->bandwidth, profile->nic->latency);
  } else {
    c.nic_link = read_link(m.map("nic"), std::nullopt, c.nic_link.latency);
  }
  MapReader f = m.map("fabric");
  const int nics = c.nodes * c.nics_per_node;
  using K = TopologyConfig::Kind;
  const K kind = f.choice<K>("kind", {{"rail_optimized", K::kRailOptimized},
                                      {"leaf_spine", K::kLeafSpine},
                                      {"fat_tree", K::kFatTree},
                                      {"torus3d", K::kTorus3d}});
  if (kind == K::kRailOptimized) {
    RailOptimizedSpec r;
    r.nodes = c.nodes;
    r.rails = c.nics_per_node;
    r.nic_link = c.nic_link;
    read_rail(f, r, false);
    c.fabric = r;
  } else if (kind == K::kLeafSpine) {
    LeafSpineSpec s;
    s.host_link = c.nic_link;
    read_leaf_spine(f, s, false, nics);
    c.fabric = s;
  } else if (kind == K::kFatTree) {
    FatTreeSpec s;
    read_fat_tree(f, s, false, nics);
    c.fabric = s;
  } else {
    Torus3dSpec s;
    read_torus(f, s, false, nics);
    c.fabric = s;
  }
  // The fabric's links are of the NICs' kind (an InfiniBand cluster is InfiniBand
  // throughout) unless they say otherwise.
  std::visit([&](auto& fabric) { inherit_link_kind(f.node(), fabric, c.nic_link); }, c.fabric);
  f.finish();
}

}  // namespace

TopologyConfig read_topology(MapReader m) {
  TopologyConfig t;
  t.source = m.context().source(m.node(), m.path());
  using K = TopologyConfig::Kind;
  t.kind = m.choice<K>("kind", {{"leaf_spine", K::kLeafSpine},
                                {"fat_tree", K::kFatTree},
                                {"rail_optimized", K::kRailOptimized},
                                {"torus3d", K::kTorus3d},
                                {"nvswitch", K::kNvSwitch},
                                {"cluster", K::kCluster},
                                {"custom", K::kCustom}});
  switch (t.kind) {
    case K::kLeafSpine:
      read_leaf_spine(m, t.leaf_spine, true);
      break;
    case K::kFatTree:
      if (m.integer("tiers", 2, 3, 3) == 2) {
        t.kind = K::kLeafSpine;
        read_leaf_spine(m, t.leaf_spine, true);
      } else {
        read_fat_tree(m, t.fat_tree, true);
      }
      break;
    case K::kRailOptimized:
      read_rail(m, t.rail_optimized, true);
      break;
    case K::kTorus3d:
      read_torus(m, t.torus3d, true);
      break;
    case K::kNvSwitch:
      t.nvswitch = read_nvswitch(m);
      break;
    case K::kCluster:
      read_cluster(m, t.cluster);
      if (m.has("nic_model")) t.nic_model_source = m.context().source(m.node()["nic_model"], m.child_path("nic_model"));
      break;
    case K::kCustom:
      read_custom(m, t.custom);
      break;
  }
  m.finish();
  return t;
}

}  // namespace fabricsim
