// FlowModel's link bundles (sim/flow/flow_model.h, set_link_bundles): links that flows
// cross together in proportion to their capacities stand as one constraint.
#include "sim/flow/flow_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/core/simulator.h"

namespace fabricsim {

void FlowModel::set_link_bundles(const std::vector<std::vector<std::uint32_t>>& groups) {
  if (started_ > 0) throw std::logic_error("link bundles are set before any flow starts");
  bundle_of_.assign(real_links_, kNoBundle);
  bundle_share_.assign(real_links_, 0);
  for (const std::vector<std::uint32_t>& g : groups) {
    if (g.size() < 2) continue;
    double total = 0;
    bool fresh = true;
    for (std::uint32_t l : g) {
      fresh = fresh && l < real_links_ && bundle_of_[l] == kNoBundle;
      if (fresh) total += links_[l].capacity;
    }
    if (!fresh) continue;
    const auto b = static_cast<std::uint32_t>(bundles_.size());
    Bundle& bundle = bundles_.emplace_back();
    bundle.members = g;
    bundle.link = static_cast<std::uint32_t>(links_.size());
    for (std::uint32_t l : g) {
      bundle_of_[l] = b;
      bundle_share_[l] = links_[l].capacity / total;
    }
    LinkState& own = links_.emplace_back();
    own.capacity = total;
  }
}

std::size_t FlowModel::link_bundles_dissolved() const {
  return static_cast<std::size_t>(std::count_if(bundles_.begin(), bundles_.end(), [](const Bundle& b) { return b.dissolved; }));
}

void FlowModel::bundle_hops(std::vector<Hop>& hops) {
  bundle_uses_.clear();
  for (const Hop& h : hops) {
    const std::uint32_t b = live_bundle(h.link);
    if (b == kNoBundle) continue;
    const double ratio = h.weight / bundle_share_[h.link];
    auto use = std::find_if(bundle_uses_.begin(), bundle_uses_.end(), [&](const BundleUse& u) { return u.bundle == b; });
    if (use == bundle_uses_.end()) {
      bundle_uses_.push_back({b, 1, h.weight, ratio, true});
      continue;
    }
    ++use->hops;
    use->weight += h.weight;
    if (std::abs(ratio - use->ratio) > 1e-9 * use->ratio) use->proportional = false;
  }
  if (bundle_uses_.empty()) return;
  for (const BundleUse& u : bundle_uses_) {
    if (!u.proportional || u.hops != bundles_[u.bundle].members.size()) dissolve(u.bundle);
  }
  bundled_hops_.clear();
  for (const Hop& h : hops) {
    const std::uint32_t b = live_bundle(h.link);
    if (b == kNoBundle) {
      bundled_hops_.push_back(h);
      continue;
    }
    // The bundle's hop, once, where its first link was.
    auto use = std::find_if(bundle_uses_.begin(), bundle_uses_.end(), [&](const BundleUse& u) { return u.bundle == b; });
    if (use->hops == 0) continue;
    bundled_hops_.push_back({bundles_[b].link, use->weight});
    use->hops = 0;
  }
  hops.swap(bundled_hops_);
}

void FlowModel::dissolve(std::uint32_t b) {
  Bundle& bundle = bundles_[b];
  LinkState& own = links_[bundle.link];
  const Time now = sim_->now();
  own.bytes += own.load * static_cast<double>(now - own.load_since);
  own.load_since = now;
  bundle.dissolved = true;  // from here its flows' windows are on their own links again
  const std::vector<Member> moving = std::move(own.members);
  own.members.clear();
  own.load = 0;
  own.window_users = 0;
  for (const Member& m : moving) {
    FlowState& s = flows_[m.flow];
    const double weight = s.hops[m.hop].weight;
    for (std::size_t k = 0; k < bundle.members.size(); ++k) {
      const std::uint32_t link = bundle.members[k];
      LinkState& l = links_[link];
      l.bytes += l.load * static_cast<double>(now - l.load_since);
      l.load_since = now;
      const Hop hop{link, weight * bundle_share_[link]};
      std::size_t at = m.hop;
      if (k == 0) {
        s.hops[at] = hop;
      } else {
        at = s.hops.size();
        s.hops.push_back(hop);
        s.member_pos.push_back(0);
      }
      s.member_pos[at] = static_cast<std::uint32_t>(l.members.size());
      l.members.push_back({m.flow, static_cast<std::uint32_t>(at)});
      l.load += contribution(s, hop);
      if (!l.dirty) {
        l.dirty = true;
        dirty_links_.push_back(link);
      }
    }
    if (s.window_link != UINT32_MAX && bundle_of_[s.window_link] == b) ++links_[s.window_link].window_users;
  }
}

}  // namespace fabricsim
