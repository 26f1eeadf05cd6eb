#include "topologies/faults.h"

#include <algorithm>
#include <cmath>

#include "sim/core/rng.h"
#include "sim/core/units.h"

namespace fabricsim {

namespace {

// The links fault i hits.
std::vector<std::size_t> links_hit(const Topology& t, const FaultSpec& f, std::size_t i) {
  const auto named = [&](const std::string& name) {
    const auto node = t.find(name);
    if (!node) throw FaultError{i, "no node is named '" + name + "'"};
    return *node;
  };
  std::vector<std::size_t> hit;
  switch (f.target) {
    case FaultSpec::Target::kLink: {
      const std::uint32_t a = named(f.a), b = named(f.b);
      for (std::size_t l = 0; l < t.links().size(); ++l) {
        const TopologyLink& link = t.links()[l];
        if ((link.a == a && link.b == b) || (link.a == b && link.b == a)) hit.push_back(l);
      }
      if (hit.empty()) throw FaultError{i, "no link joins '" + f.a + "' and '" + f.b + "'"};
      break;
    }
    case FaultSpec::Target::kSwitch: {
      const std::uint32_t s = named(f.node);
      if (t.node(s).kind != NodeKind::kSwitch) throw FaultError{i, "'" + f.node + "' is an endpoint, not a switch"};
      for (std::size_t l = 0; l < t.links().size(); ++l) {
        if (t.links()[l].a == s || t.links()[l].b == s) hit.push_back(l);
      }
      break;
    }
    case FaultSpec::Target::kTier: {
      std::vector<std::string> tiers;
      for (std::size_t l = 0; l < t.links().size(); ++l) {
        const std::string& tier = t.links()[l].tier;
        if (tier == f.tier) hit.push_back(l);
        if (std::find(tiers.begin(), tiers.end(), tier) == tiers.end()) tiers.push_back(tier);
      }
      if (hit.empty()) {
        std::string known;
        for (const std::string& k : tiers) known += (known.empty() ? "" : ", ") + k;
        throw FaultError{i, "no link is in tier '" + f.tier + "' (this fabric's tiers: " + known + ")"};
      }
      // A seeded draw of round(fraction x links), in link order afterwards.
      const auto count = static_cast<std::size_t>(std::llround(f.fraction * static_cast<double>(hit.size())));
      Rng rng(f.seed);
      for (std::size_t k = 0; k < count && k + 1 < hit.size(); ++k) {
        const std::size_t pick = k + static_cast<std::size_t>(rng.next() % (hit.size() - k));
        std::swap(hit[k], hit[pick]);
      }
      hit.resize(count);
      std::sort(hit.begin(), hit.end());
      break;
    }
  }
  return hit;
}

}  // namespace

std::vector<AppliedFault> apply_faults(Topology& t, const std::vector<FaultSpec>& faults) {
  std::vector<bool> drop(t.links().size(), false);
  std::vector<AppliedFault> applied;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const FaultSpec& f = faults[i];
    if (f.at >= 0) continue;  // during the run: timed_faults()
    for (std::size_t l : links_hit(t, f, i)) {
      const TopologyLink& link = t.links()[l];
      Bandwidth bw = link.bandwidth;
      if (f.bandwidth) {
        if (f.bandwidth->bits_per_second > link.bandwidth.bits_per_second) {
          throw FaultError{i, "a degraded link is slower than it was: " + std::to_string(link.bandwidth.gbps_value()) +
                                  " Gb/s here, the fault asks for more"};
        }
        bw = *f.bandwidth;
      }
      const Time latency = link.latency + f.extra_latency;
      if (!f.down) t.set_link_rate(l, bw, latency);
      drop[l] = drop[l] || f.down;
      applied.push_back({i, t.node(link.a).name, t.node(link.b).name, link.tier, f.down, bw, latency});
    }
  }
  t.remove_links(drop);
  return applied;
}

std::vector<TimedFault> timed_faults(const Topology& t, const std::vector<FaultSpec>& faults) {
  std::vector<TimedFault> out;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const FaultSpec& f = faults[i];
    if (f.at < 0) continue;
    if (!f.down) throw FaultError{i, "a fault at a time takes links down (down: true); degradations hold from the start"};
    TimedFault tf{i, f.at, f.at + f.detection, links_hit(t, f, i)};
    for (std::size_t l : tf.links) {
      const TopologyLink& link = t.links()[l];
      if (t.node(link.a).kind == NodeKind::kHost || t.node(link.b).kind == NodeKind::kHost) {
        throw FaultError{i, "link " + t.node(link.a).name + " - " + t.node(link.b).name +
                                " ends at an endpoint: during a run only links between switches may fail"};
      }
    }
    out.push_back(std::move(tf));
  }
  std::stable_sort(out.begin(), out.end(), [](const TimedFault& a, const TimedFault& b) { return a.at < b.at; });
  return out;
}

Routes routes_without(const Topology& t, const std::vector<bool>& down) {
  Topology reduced = t;
  reduced.remove_links(down);
  Routes routes = compute_routes(reduced);
  // Port k of a node in the reduced graph is its k-th surviving link: back to the
  // numbering of the whole graph.
  std::vector<std::vector<PortIndex>> original(t.nodes().size());
  std::vector<PortIndex> ports(t.nodes().size(), 0);
  for (std::size_t l = 0; l < t.links().size(); ++l) {
    const TopologyLink& link = t.links()[l];
    const PortIndex pa = ports[link.a]++;
    const PortIndex pb = ports[link.b]++;
    if (l < down.size() && down[l]) continue;
    original[link.a].push_back(pa);
    original[link.b].push_back(pb);
  }
  for (std::size_t n = 0; n < routes.tables.size(); ++n) {
    for (PortIndex& p : routes.tables[n].ports) p = original[n][p];
  }
  return routes;
}

}  // namespace fabricsim
