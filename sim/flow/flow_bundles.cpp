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
    link_flows_.emplace_back();
  }
  bundle_use_of_.assign(bundles_.size(), kNoUse);
}

bool FlowModel::bundle_hops(std::vector<Hop>& hops, bool may_dissolve) {
  bundle_uses_.clear();
  for (const Hop& h : hops) {
    const std::uint32_t b = live_bundle(h.link);
    if (b == kNoBundle) continue;
    const double ratio = h.weight / bundle_share_[h.link];
    if (bundle_use_of_[b] == kNoUse) {
      bundle_use_of_[b] = static_cast<std::uint32_t>(bundle_uses_.size());
      bundle_uses_.push_back({b, 1, h.weight, ratio, true});
      continue;
    }
    BundleUse* use = &bundle_uses_[bundle_use_of_[b]];
    ++use->hops;
    use->weight += h.weight;
    if (std::abs(ratio - use->ratio) > 1e-9 * use->ratio) use->proportional = false;
  }
  if (bundle_uses_.empty()) return true;
  for (const BundleUse& u : bundle_uses_) {
    if (u.proportional && u.hops == bundles_[u.bundle].members.size()) continue;
    if (!may_dissolve) {
      for (const BundleUse& v : bundle_uses_) bundle_use_of_[v.bundle] = kNoUse;
      return false;
    }
    dissolve(u.bundle);
  }
  bundled_hops_.clear();
  for (const Hop& h : hops) {
    const std::uint32_t b = live_bundle(h.link);
    if (b == kNoBundle) {
      bundled_hops_.push_back(h);
      continue;
    }
    // The bundle's hop, once, where its first link was.
    BundleUse* use = &bundle_uses_[bundle_use_of_[b]];
    if (use->hops == 0) continue;
    bundled_hops_.push_back({bundles_[b].link, use->weight});
    use->hops = 0;
  }
  for (const BundleUse& u : bundle_uses_) bundle_use_of_[u.bundle] = kNoUse;
  hops.swap(bundled_hops_);
  return true;
}

bool FlowModel::weigh_and_bundle(std::vector<Hop>& hops, std::uint32_t shares, bool may_dissolve) {
  if (shares > 1) {
    const double s = static_cast<double>(shares);
    for (Hop& h : hops) h.weight *= s;  // its load on each link: every share's
  }
  return bundles_.empty() || bundle_hops(hops, may_dissolve);
}

bool FlowModel::prepare(Route& route, const std::vector<Hop>& raw) {
  std::vector<Hop> hops = raw;
  if (!weigh_and_bundle(hops, route.shares, false)) return false;
  route.hops = std::move(hops);
  route.raw_hops = &raw;
  route.prepared_at = dissolutions_;
  return true;
}

void FlowModel::dissolve(std::uint32_t b) {
  Bundle& bundle = bundles_[b];
  LinkState& own = links_[bundle.link];
  const Time now = sim_->now();
  own.bytes += own.load * static_cast<double>(now - own.load_since);
  own.load_since = now;
  bundle.dissolved = true;  // from here its flows' windows are on their own links again
  ++dissolutions_;
  const std::vector<Member> moving = std::move(link_flows_[bundle.link].members);
  link_flows_[bundle.link].members.clear();
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
      std::vector<Member>& members = link_flows_[link].members;
      s.member_pos[at] = static_cast<std::uint32_t>(members.size());
      members.push_back({m.flow, static_cast<std::uint32_t>(at)});
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
