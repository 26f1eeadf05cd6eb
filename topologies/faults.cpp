#include "topologies/faults.h"

#include <algorithm>
#include <cmath>

#include "sim/rng.h"
#include "sim/units.h"

namespace fabricsim {

std::vector<AppliedFault> apply_faults(Topology& t, const std::vector<FaultSpec>& faults) {
  std::vector<bool> drop(t.links().size(), false);
  std::vector<AppliedFault> applied;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const FaultSpec& f = faults[i];
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
    for (std::size_t l : hit) {
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

}  // namespace fabricsim
