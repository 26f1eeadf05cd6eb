#include "sim/flow/flow_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/core/simulator.h"
#include "sim/flow/drain_time.h"

namespace fabricsim {

FlowModel::FlowModel(Simulator& sim, std::vector<double> capacity, MessageObserver* observer)
    : sim_(&sim), observer_(observer) {
  links_.resize(capacity.size());
  link_flows_.resize(capacity.size());
  for (std::size_t i = 0; i < capacity.size(); ++i) {
    if (!(capacity[i] > 0)) throw std::invalid_argument("a link of the flow model has no capacity");
    links_[i].capacity = capacity[i];
  }
  real_links_ = links_.size();
}

void FlowModel::start(MessageId id, std::int64_t wire_bytes, std::int64_t payload, const Route& route) {
  if (route.in_turn != kNoTurn) {
    start(id, wire_bytes, payload, Route(route));  // kept until its turn
    return;
  }
  if (route.hops.empty()) throw std::logic_error("a flow with no links");
  if (route.posted) note(sim_->now(), id, 0, 0);
  start_now(id, wire_bytes, payload, route, false);
}

void FlowModel::start(MessageId id, std::int64_t wire_bytes, std::int64_t payload, Route&& route) {
  if (route.hops.empty()) throw std::logic_error("a flow with no links");
  if (route.posted) note(sim_->now(), id, 0, 0);
  if (route.in_turn == kNoTurn) {
    start_now(id, wire_bytes, payload, route, false);
  } else if (wire_bytes > route.turn_bytes) {
    const Route& kept = body_routes_[id] = std::move(route);
    start_now(id, wire_bytes - kept.turn_bytes, payload, kept, true);
  } else {
    take_turn({id, wire_bytes, payload, std::move(route)});
  }
}

void FlowModel::take_turn(Waiting&& w) {
  Turns& t = turns_[w.route.in_turn];
  if (t.busy) {
    t.waiting.push_back(std::move(w));
    return;
  }
  t.busy = true;
  start_now(w.id, w.wire_bytes, w.payload, w.route, false);
}

void FlowModel::pass_turns() {
  for (std::size_t i = 0; i < turn_over_.size(); ++i) {
    Turns& t = turns_[turn_over_[i]];
    t.busy = false;
    if (t.waiting.empty()) continue;
    Waiting next = std::move(t.waiting.front());
    t.waiting.pop_front();
    take_turn(std::move(next));
  }
  turn_over_.clear();
  for (std::size_t i = 0; i < tails_due_.size(); ++i) take_turn(std::move(tails_due_[i]));
  tails_due_.clear();
}

void FlowModel::start_now(MessageId id, std::int64_t wire_bytes, std::int64_t payload, const Route& route, bool body) {
  std::uint32_t f;
  if (!free_flows_.empty()) {
    f = free_flows_.back();
    free_flows_.pop_back();
  } else {
    f = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  FlowState& s = flows_[f];
  if (route.tells_start && !body) note(sim_->now(), id, 3, 0);
  s.id = id;
  s.serial = next_serial_++;
  s.remaining = static_cast<double>(wire_bytes);
  s.rate = 0;
  s.last = sim_->now();
  s.finish = kTimeMax;
  s.deliver_delay = route.deliver_delay;
  s.ack_delay = route.ack_delay;
  s.payload = payload;
  s.heap_pos = UINT32_MAX;
  s.acknowledged = route.acknowledged;
  s.sum = route.sum;
  s.sum_parts = route.sum_parts;
  s.window_link = route.window_link;
  s.window = route.window;
  s.ahead = s.ahead_cap = s.push = 0;
  s.sent = route.window <= 0;
  s.body = body;
  s.in_turn = route.in_turn;
  s.posted = route.posted;
  s.tail_wire = route.turn_bytes;
  s.tail_payload = payload;
  s.deliver.assign(route.deliver.begin(), route.deliver.end());
  s.shares = static_cast<double>(std::max<std::uint32_t>(1, route.shares));
  s.cap = route.cap;
  if (route.raw_hops != nullptr && route.prepared_at == dissolutions_) {
    s.hops.assign(route.hops.begin(), route.hops.end());
  } else {
    const std::vector<Hop>& raw = route.raw_hops != nullptr ? *route.raw_hops : route.hops;
    s.hops.assign(raw.begin(), raw.end());
    weigh_and_bundle(s.hops, route.shares, true);
  }
  s.member_pos.resize(s.hops.size());
  for (std::size_t h = 0; h < s.hops.size(); ++h) {
    LinkState& l = links_[s.hops[h].link];
    LinkFlows& on = link_flows_[s.hops[h].link];
    s.member_pos[h] = static_cast<std::uint32_t>(on.members.size());
    on.members.push_back({f, static_cast<std::uint32_t>(h)});
    ++on.flows;
    if (!l.dirty) {
      l.dirty = true;
      dirty_links_.push_back(s.hops[h].link);
    }
  }
  if (s.window_link != UINT32_MAX) ++links_[window_constraint(s)].window_users;
  new_flows_.push_back(f);
  ++started_;
  max_active_ = std::max(max_active_, ++active_);
  wake_now();
}

void FlowModel::note(Time at, MessageId id, std::uint8_t kind, std::int64_t payload) {
  notes_.push_back({at, next_note_++, id, kind, payload});
  std::push_heap(notes_.begin(), notes_.end(), NoteLater{});
}

void FlowModel::wake_now() {
  if (in_event_) return;  // the event under way settles it before it ends
  const Time at = solve_time(sim_->now());
  if (scheduled() && event_time() <= at) return;
  sim_->schedule_at(*this, at);
}

void FlowModel::remove_from_links(std::uint32_t f) {
  FlowState& s = flows_[f];
  const Time now = sim_->now();
  if (s.window_link != UINT32_MAX) --links_[window_constraint(s)].window_users;
  for (std::size_t h = 0; h < s.hops.size(); ++h) {
    const std::uint32_t link = s.hops[h].link;
    LinkState& l = links_[link];
    // Its load leaves with it (what it carried so far is counted first).
    l.bytes += l.load * static_cast<double>(now - l.load_since);
    l.load_since = now;
    std::vector<Member>& members = link_flows_[link].members;
    l.load = members.size() == 1 ? 0.0 : std::max(0.0, l.load - contribution(s, s.hops[h]));
    const std::uint32_t pos = s.member_pos[h];
    const Member last = members.back();
    members[pos] = last;
    flows_[last.flow].member_pos[last.hop] = pos;
    members.pop_back();
    if (!l.dirty) {
      l.dirty = true;
      dirty_links_.push_back(link);
    }
  }
  s.hops.clear();
  s.member_pos.clear();
  set_bottleneck(s, UINT32_MAX);
}

void FlowModel::complete_due(Time now) {
  while (!heap_.empty() && flows_[heap_[0]].finish <= now) {
    const std::uint32_t f = heap_[0];
    heap_remove(f);
    FlowState& sending = flows_[f];
    if (!sending.sent) {
      // Its last byte has left the sender, ahead of the flow's rate: it drains on.
      sending.sent = true;
      if (sending.body) {
        tails_due_.push_back({sending.id, sending.tail_wire, sending.tail_payload, std::move(body_routes_.at(sending.id))});
        body_routes_.erase(sending.id);
      } else {
        if (!sending.posted) note(now, sending.id, 0, 0);
        if (sending.in_turn != kNoTurn && !queue_pair_turn(sending.in_turn)) turn_over_.push_back(sending.in_turn);
      }
      sending.finish = sending.last + drain_time(sending.remaining, sending.rate);
      if (sending.finish < now) sending.finish = now;
      heap_update(f);
      continue;
    }
    remove_from_links(f);
    const FlowState& s = flows_[f];
    if (s.body) {
      if (s.window <= 0) {  // sent as it drains: its last quantum's turn now
        tails_due_.push_back({s.id, s.tail_wire, s.tail_payload, std::move(body_routes_.at(s.id))});
        body_routes_.erase(s.id);
      }
      free_flows_.push_back(f);
      --active_;
      continue;
    }
    const Time delivered = now + s.deliver_delay;
    if (s.window <= 0) {
      if (!s.posted) note(now, s.id, 0, 0);
      if (s.in_turn != kNoTurn && !queue_pair_turn(s.in_turn)) turn_over_.push_back(s.in_turn);
    }
    // A queue pair's next message streams on behind this one's last byte.
    if (queue_pair_turn(s.in_turn)) turn_over_.push_back(s.in_turn);
    if (s.acknowledged) {
      note(delivered, s.id, 1, s.payload);
      note(delivered + s.ack_delay, s.id, 2, 0);
    } else if (s.sum == kNoSum) {
      note(now, s.id, 2, 0);  // nothing answers it: sent is done
      for (MessageId r : s.deliver) note(delivered, r, 1, s.payload);
    } else {
      note(now, s.id, 2, 0);
      SumState& sum = sums_[s.sum];
      if (sum.left == 0) sum.left = s.sum_parts;
      sum.delay = std::max(sum.delay, s.deliver_delay);
      sum.payload = s.payload;
      sum.deliver.insert(sum.deliver.end(), s.deliver.begin(), s.deliver.end());
      if (--sum.left == 0) {
        // The last contribution is in: the sum goes on to its owner.
        for (MessageId r : sum.deliver) note(now + sum.delay, r, 1, sum.payload);
        sums_.erase(s.sum);
      }
    }
    free_flows_.push_back(f);
    --active_;
  }
}

Time FlowModel::plan_sending(FlowState& s, Time now) {
  if (s.rate <= 0) return kTimeMax / 4;
  // The window link's load and capacity (in a live bundle: its share of the bundle's).
  const std::uint32_t pacing = window_constraint(s);
  const double share = pacing == s.window_link ? 1.0 : bundle_share_[s.window_link];
  const LinkState& first = links_[pacing];
  // The first link pushes the flow at its share of the link's spare capacity (its load
  // scaled up to the capacity) while the next buffer fills, then at the flow's rate
  // with the flow's share of the window ahead.
  const double load = std::max(first.load * share, s.rate * 1e-9);
  const double push = s.rate * std::max(1.0, first.capacity * share / load);
  const double cap = std::min(s.window * s.rate / load, s.remaining + s.ahead);
  s.push = push;
  s.ahead_cap = std::max(cap, s.ahead);
  if (s.remaining <= s.ahead) return now;
  const double behind_cap = (s.remaining - s.ahead_cap) / s.rate;  // once the lead is at its cap
  const double pushing = (s.remaining - s.ahead) / push;                     // pushing at the first link's pace
  return now + drain_time(std::max({behind_cap, pushing, 0.0}), 1.0);
}

void FlowModel::on_event() {
  in_event_ = true;
  const Time now = sim_->now();
  for (;;) {
    complete_due(now);
    pass_turns();
    if (!dirty_links_.empty() && solve_time(now) == now) solve(now);
    if (!heap_.empty() && flows_[heap_[0]].finish <= now) continue;
    if (notes_.empty() || notes_.front().time > now) break;
    // Everything due now is told before the rates are worked out again: what the
    // observers start at this instant is settled with it.
    while (!notes_.empty() && notes_.front().time <= now) {
      std::pop_heap(notes_.begin(), notes_.end(), NoteLater{});
      const Note n = notes_.back();
      notes_.pop_back();
      switch (n.kind) {
        case 0: observer_->on_message_sent(n.id, now); break;
        case 3: observer_->on_message_started(n.id, now); break;
        case 1:
          payload_delivered_ += static_cast<std::uint64_t>(n.payload);
          observer_->on_message_delivered(n.id, now);
          break;
        default:
          ++finished_;
          observer_->on_message_finished(n.id, now);
          break;
      }
    }
  }
  in_event_ = false;
  Time next = kTimeMax;
  if (!heap_.empty()) next = flows_[heap_[0]].finish;
  if (!notes_.empty()) next = std::min(next, notes_.front().time);
  if (!dirty_links_.empty()) next = std::min(next, solve_time(now + 1));
  if (next == kTimeMax) {
    sim_->cancel(*this);
  } else {
    sim_->schedule_at(*this, next);
  }
}

double FlowModel::link_bytes(std::uint32_t link, Time now) const {
  const auto carried = [&](const LinkState& l) { return l.bytes + l.load * static_cast<double>(std::max<Time>(0, now - l.load_since)); };
  const std::uint32_t b = link < bundle_of_.size() ? bundle_of_[link] : kNoBundle;
  // A bundle's bytes go over its links in proportion (all of them while it was live).
  return carried(links_[link]) + (b == kNoBundle ? 0.0 : bundle_share_[link] * carried(links_[bundles_[b].link]));
}

// The completion heap: a binary heap of flow numbers, each flow knowing its place.
bool FlowModel::earlier(std::uint32_t a, std::uint32_t b) const {
  const FlowState& x = flows_[a];
  const FlowState& y = flows_[b];
  return x.finish != y.finish ? x.finish < y.finish : x.serial < y.serial;
}

void FlowModel::heap_place(std::size_t i, std::uint32_t f) {
  heap_[i] = f;
  flows_[f].heap_pos = static_cast<std::uint32_t>(i);
}

void FlowModel::sift_up(std::size_t i) {
  const std::uint32_t f = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!earlier(f, heap_[parent])) break;
    heap_place(i, heap_[parent]);
    i = parent;
  }
  heap_place(i, f);
}

void FlowModel::sift_down(std::size_t i) {
  const std::uint32_t f = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], f)) break;
    heap_place(i, heap_[child]);
    i = child;
  }
  heap_place(i, f);
}

void FlowModel::heap_update(std::uint32_t f) {
  FlowState& s = flows_[f];
  if (s.heap_pos == UINT32_MAX) {
    heap_.push_back(f);
    s.heap_pos = static_cast<std::uint32_t>(heap_.size() - 1);
    sift_up(s.heap_pos);
    return;
  }
  sift_up(s.heap_pos);
  sift_down(flows_[f].heap_pos);
}

void FlowModel::heap_remove(std::uint32_t f) {
  const std::uint32_t pos = flows_[f].heap_pos;
  flows_[f].heap_pos = UINT32_MAX;
  const std::uint32_t last = heap_.back();
  heap_.pop_back();
  if (pos == heap_.size()) return;
  heap_place(pos, last);
  sift_up(pos);
  sift_down(flows_[last].heap_pos);
}

}  // namespace fabricsim
