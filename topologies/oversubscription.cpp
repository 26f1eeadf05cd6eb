#include "topologies/oversubscription.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>

namespace fabricsim {

std::vector<TierOversubscription> oversubscription(const Topology& t) {
  const std::size_t n = t.nodes().size();
  std::vector<std::vector<std::size_t>> links_of(n);
  for (std::size_t i = 0; i < t.links().size(); ++i) {
    links_of[t.links()[i].a].push_back(i);
    links_of[t.links()[i].b].push_back(i);
  }
  // Hops to the nearest endpoint, breadth first from all of them.
  constexpr std::uint32_t kFar = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> distance(n, kFar);
  std::deque<std::uint32_t> frontier;
  for (std::uint32_t h = 0; h < t.host_count(); ++h) {
    distance[t.host_node(h)] = 0;
    frontier.push_back(t.host_node(h));
  }
  while (!frontier.empty()) {
    const std::uint32_t v = frontier.front();
    frontier.pop_front();
    for (std::size_t i : links_of[v]) {
      const std::uint32_t w = t.links()[i].a == v ? t.links()[i].b : t.links()[i].a;
      if (distance[w] == kFar) {
        distance[w] = distance[v] + 1;
        frontier.push_back(w);
      }
    }
  }
  struct Tier {
    TierOversubscription figures;
    std::uint32_t nearest = kFar;  // for the order
  };
  std::map<std::string, Tier> tiers;
  for (std::uint32_t s = 0; s < t.switch_count(); ++s) {
    const std::uint32_t v = t.switch_node(s);
    if (distance[v] == kFar) continue;
    double down = 0, up = 0;
    for (std::size_t i : links_of[v]) {
      const TopologyLink& l = t.links()[i];
      const std::uint32_t w = l.a == v ? l.b : l.a;
      const auto bps = static_cast<double>(l.bandwidth.bits_per_second);
      if (distance[w] < distance[v]) down += bps;
      if (distance[w] > distance[v] && distance[w] != kFar) up += bps;
    }
    if (down <= 0 || up <= 0) continue;
    Tier& tier = tiers[t.node(v).role];
    const double ratio = down / up;
    TierOversubscription& f = tier.figures;
    f.role = t.node(v).role;
    f.lowest = f.switches == 0 ? ratio : std::min(f.lowest, ratio);
    f.highest = f.switches == 0 ? ratio : std::max(f.highest, ratio);
    ++f.switches;
    tier.nearest = std::min(tier.nearest, distance[v]);
  }
  std::vector<Tier> ordered;
  for (auto& [role, tier] : tiers) ordered.push_back(tier);
  std::stable_sort(ordered.begin(), ordered.end(), [](const Tier& a, const Tier& b) { return a.nearest < b.nearest; });
  std::vector<TierOversubscription> out;
  for (const Tier& tier : ordered) out.push_back(tier.figures);
  return out;
}

}  // namespace fabricsim
