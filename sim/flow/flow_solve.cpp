// FlowModel's solve (sim/flow/flow_model.h): max-min rates by progressive filling over
// the part of the flow-link graph a change reaches, then settled into the flows and links.
#include "sim/flow/flow_model.h"

#include <algorithm>

#include "sim/flow/drain_time.h"

namespace fabricsim {

namespace {

// Below this a link's remaining weight is rounding left over from freezing its flows.
constexpr double kNoWeight = 1e-9;

}  // namespace

// Max-min rates change only where a change can reach them through the flows' bottlenecks.
// Every flow is held by a bottleneck: a saturated link where no flow is faster. Capacity
// freed or taken on a link moves only the flows held there; their new rates move the
// flows held on their other links, and so on. So the part solved is: the flows just
// started, the flows held on a changed link, and, repeatedly, the flows held on any
// link of a flow taken in. The other flows keep their rates, and their load is taken off
// each link's capacity. If a bottleneck of that filling carries an outside flow faster
// than its share, that flow is taken in too and the part filled again (after two such
// rounds, every flow of every link reached, which leaves none outside). Max-min rates are
// unique, so this is the solution a solve over the whole connected part of the flow-link
// graph would give (up to rounding), at a cost that follows the flows a change reaches,
// not the fabric's shared spines or the acknowledgements' way back.
void FlowModel::take_in(std::uint32_t f) {
  FlowState& s = flows_[f];
  if (s.visit == stamp_) return;
  s.visit = stamp_;
  comp_flows_.push_back(f);
  for (const Hop& h : s.hops) {
    if (links_[h.link].visit != stamp_) {
      links_[h.link].visit = stamp_;
      comp_links_.push_back(h.link);
    }
  }
}

void FlowModel::take_in_held(bool every_link) {
  for (; scanned_ < comp_links_.size(); ++scanned_) {
    const std::uint32_t link = comp_links_[scanned_];
    if (!every_link && links_[link].held == 0) continue;  // (most links of a long ring flow)
    const std::vector<Member>& members = link_flows_[link].members;
    for (std::size_t i = 0; i < members.size(); ++i) {
      const std::uint32_t f = members[i].flow;
      if (every_link || flows_[f].bottleneck == link) take_in(f);
    }
  }
}

void FlowModel::fill() {
  // The capacity each link has for the flows taken in: all but the outside flows' load.
  for (std::uint32_t link : comp_links_) {
    LinkState& l = links_[link];
    l.residual = l.capacity - l.load;
    l.weight_left = 0;
  }
  std::size_t unfrozen = comp_flows_.size();
  for (std::uint32_t f : comp_flows_) {
    FlowState& s = flows_[f];
    s.frozen = false;
    s.next_rate = s.rate;
    set_bottleneck(s, UINT32_MAX);
    if (fill_alone(s, f)) {
      --unfrozen;
      continue;
    }
    for (const Hop& h : s.hops) {
      LinkState& l = links_[h.link];
      l.residual += contribution(s, h);
      l.weight_left += h.weight;
    }
  }
  // Progressive filling: raise every unfrozen flow's rate together; the link whose
  // residual capacity per unit of unfrozen weight is smallest saturates first and
  // freezes its flows at that share. Ties go to the lower link number.
  const auto later = [](const Share& a, const Share& b) { return a.share != b.share ? a.share > b.share : a.link > b.link; };
  shares_.clear();
  bottlenecks_.clear();
  for (std::uint32_t link : comp_links_) {
    const LinkState& l = links_[link];
    if (l.weight_left > kNoWeight) shares_.push_back({std::max(0.0, l.residual) / l.weight_left, link});
  }
  for (std::uint32_t f : comp_flows_) {
    if (flows_[f].cap > 0 && !flows_[f].frozen) shares_.push_back({flows_[f].cap, kCapped + f});
  }
  std::make_heap(shares_.begin(), shares_.end(), later);
  // Freezing flows only raises other links' shares ((R - w s) / (W - w) >= R / W when
  // s <= R / W), so entries are not updated as flows freeze: a popped entry whose link's
  // share has since grown goes back in with its new value, and one that still holds is
  // the smallest there is.
  while (!shares_.empty() && unfrozen > 0) {
    std::pop_heap(shares_.begin(), shares_.end(), later);
    const Share top = shares_.back();
    shares_.pop_back();
    if (top.link >= kCapped) {
      // A flow's own cap, below every share left: it runs at its cap.
      FlowState& s = flows_[top.link - kCapped];
      if (s.frozen) continue;
      freeze(s, top.share, kCapped);
      --unfrozen;
      continue;
    }
    LinkState& bottleneck = links_[top.link];
    if (bottleneck.weight_left <= kNoWeight) continue;  // every flow on it is frozen
    const double current = std::max(0.0, bottleneck.residual) / bottleneck.weight_left;
    if (current > top.share) {
      shares_.push_back({current, top.link});
      std::push_heap(shares_.begin(), shares_.end(), later);
      continue;
    }
    const double share = top.share;
    bottlenecks_.push_back(top);
    for (const Member& m : link_flows_[top.link].members) {
      FlowState& s = flows_[m.flow];
      if (s.visit != stamp_ || s.frozen) continue;
      freeze(s, share, top.link);
      --unfrozen;
    }
  }
}

bool FlowModel::fill_alone(FlowState& s, std::uint32_t f) {
  for (const Hop& h : s.hops) {
    if (link_flows_[h.link].members.size() != 1) return false;
  }
  // Alone on each of its links: progressive filling would freeze it at its first entry to
  // leave the heap, the least (share, link) of its links' and its cap's, computed alike.
  Share least{0, UINT32_MAX};
  bool any = false;
  const auto take = [&](Share c) {
    if (!any || c.share < least.share || (c.share == least.share && c.link < least.link)) least = c;
    any = true;
  };
  for (const Hop& h : s.hops) {
    const LinkState& l = links_[h.link];
    const double residual = l.residual + contribution(s, h);
    if (h.weight > kNoWeight) take({std::max(0.0, residual) / h.weight, h.link});
  }
  if (s.cap > 0) take({s.cap, kCapped + f});
  if (!any) return false;
  freeze(s, least.share, least.link >= kCapped ? kCapped : least.link);
  return true;
}

void FlowModel::set_bottleneck(FlowState& s, std::uint32_t link) {
  if (s.bottleneck < links_.size()) --links_[s.bottleneck].held;
  s.bottleneck = link;
  if (link < links_.size()) ++links_[link].held;
}

void FlowModel::freeze(FlowState& s, double share, std::uint32_t bottleneck) {
  s.frozen = true;
  s.next_rate = share * s.shares;  // each share's fair share, together
  set_bottleneck(s, bottleneck);
  for (const Hop& h : s.hops) {
    LinkState& l = links_[h.link];
    l.residual -= h.weight * share;
    l.weight_left -= h.weight;
  }
}

bool FlowModel::take_in_faster() {
  const std::size_t before = comp_flows_.size();
  for (const Share& b : bottlenecks_) {
    const std::vector<Member>& members = link_flows_[b.link].members;
    const double limit = b.share * (1 + 1e-9);
    for (std::size_t i = 0; i < members.size(); ++i) {
      const FlowState& s = flows_[members[i].flow];
      if (s.visit != stamp_ && s.rate / s.shares > limit) take_in(members[i].flow);
    }
  }
  return comp_flows_.size() != before;
}

void FlowModel::advance(FlowState& s, Time now) {
  if (!s.sent) s.ahead = std::min(s.ahead_cap, s.ahead + (s.push - s.rate) * static_cast<double>(now - s.last));
  s.remaining = std::max(0.0, s.remaining - s.rate * static_cast<double>(now - s.last));
  s.last = now;
}

void FlowModel::solve(Time now) {
  ++solves_;
  if (++stamp_ == 0) {  // the stamp wrapped: clear the old marks
    for (LinkState& l : links_) l.visit = 0;
    for (FlowState& s : flows_) s.visit = 0;
    stamp_ = 1;
  }
  comp_links_.clear();
  comp_flows_.clear();
  scanned_ = 0;
  for (std::uint32_t l : dirty_links_) {
    links_[l].dirty = false;
    if (links_[l].visit != stamp_) {
      links_[l].visit = stamp_;
      comp_links_.push_back(l);
    }
  }
  dirty_links_.clear();
  for (std::uint32_t f : new_flows_) {
    if (!flows_[f].hops.empty()) take_in(f);
  }
  new_flows_.clear();
  // Should outside flows keep turning up, the part grows to the whole connected part of
  // the flow-link graph (every link's flows), where none is outside: at most three fills.
  int fills = 0;
  do {
    take_in_held(fills >= 2);
    fill();
    ++fills;
  } while (take_in_faster());
  flows_solved_ += comp_flows_.size();

  // The rates settle: what each flow and link did up to now at the old ones is counted.
  for (std::uint32_t link : comp_links_) {
    LinkState& l = links_[link];
    l.bytes += l.load * static_cast<double>(now - l.load_since);
    l.load_since = now;
  }
  for (std::uint32_t f : comp_flows_) {
    FlowState& s = flows_[f];
    advance(s, now);
    const double old_rate = s.rate;
    const double new_rate = s.next_rate;
    // Each link once per flow: its old contribution out, its new one in, in the order
    // two loops over the hops would take them.
    for (const Hop& h : s.hops) {
      double& load = links_[h.link].load;
      load -= h.weight * old_rate / s.shares;
      load += h.weight * new_rate / s.shares;
    }
    s.rate = new_rate;
    if (s.sent && (s.rate != old_rate || s.finish == kTimeMax)) {
      s.finish = now + drain_time(s.remaining, s.rate);
      heap_update(f);
    }
  }
  // Senders still sending: their lead depends on their first link's load, which the
  // flows solved may have changed, for them and for the other flows starting there.
  // (Planning reads loads and writes only its flow; the completion heap orders by
  // (finish, serial), which no two flows share, so the order of planning is free.)
  for (std::uint32_t link : comp_links_) {
    LinkState& l = links_[link];
    l.load = std::clamp(l.load, 0.0, l.capacity);
    if (l.window_users == 0) continue;
    for (const Member& m : link_flows_[link].members) {
      FlowState& s = flows_[m.flow];
      if (s.visit == stamp_ || s.sent || window_constraint(s) != link) continue;
      advance(s, now);
      s.finish = plan_sending(s, now);
      heap_update(m.flow);
    }
  }
  for (std::uint32_t f : comp_flows_) {
    FlowState& s = flows_[f];
    if (s.sent) continue;
    s.finish = plan_sending(s, now);
    heap_update(f);
  }
}

}  // namespace fabricsim
