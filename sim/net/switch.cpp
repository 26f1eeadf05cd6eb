#include "sim/net/switch.h"

#include <algorithm>
#include <cstdint>

#include "sim/core/rng.h"
#include "sim/core/simulator.h"

namespace fabricsim {

PortIndex Switch::add_port(EgressPort& port) {
  if (ports_.empty()) first_port_ = &port;
  ports_side_by_side_ = ports_.empty() || (ports_side_by_side_ && &port == first_port_ + ports_.size());
  ports_.push_back(&port);
  port.set_observer(this);
  port.set_ecn(&ecn_, &rng_);
  return static_cast<PortIndex>(ports_.size() - 1);
}

void Switch::find_credit_ports() {
  credit_ports_.assign((ports_.size() + 63) / 64, 0);
  any_credit_ports_ = false;
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    if (ports_[i]->credit_based()) {
      credit_ports_[i / 64] |= std::uint64_t{1} << (i % 64);
      any_credit_ports_ = true;
    }
  }
}

void Switch::set_ecn(const EcnConfig& ecn, const std::vector<EcnForSpeed>& by_speed) {
  ecn_ = ecn;
  ecn_by_speed_.clear();
  for (const EcnForSpeed& e : by_speed) {
    // Only the speeds this switch has (most have one or two).
    for (const EgressPort* p : ports_) {
      if (p->bandwidth().bits_per_second == e.bits_per_second) {
        ecn_by_speed_.push_back(e);
        break;
      }
    }
  }
  for (EgressPort* p : ports_) p->set_ecn(&ecn_for_speed(ecn_, ecn_by_speed_, p->bandwidth().bits_per_second), &rng_);
}

void Switch::set_torus_port(PortIndex port, std::uint8_t dimension, bool dateline) {
  if (port_dimension_.size() < ports_.size()) {
    port_dimension_.resize(ports_.size(), kNoDimension);
    port_dateline_.resize(ports_.size(), 0);
  }
  port_dimension_[port] = dimension;
  port_dateline_[port] = dateline ? 1 : 0;
}

PortIndex Switch::choose(const Packet& p, const PortIndex* candidates, std::uint32_t count) {
  if (lb_ == LoadBalancing::kAdaptive) {
    // Least bytes waiting; the scan starts one further each time, so ties rotate instead
    // of every switch herding onto its first port.
    const std::uint32_t start = static_cast<std::uint32_t>(++spray_counter_ % count);
    PortIndex best = candidates[start];
    std::int64_t least = INT64_MAX;
    for (std::uint32_t i = 0; i < count; ++i) {
      const PortIndex c = candidates[(start + i) % count];
      const EgressPort& candidate = port(c);
      const std::int64_t load = candidate.queued_bytes() + (candidate.busy() ? 1 : 0);
      if (load < least) {
        least = load;
        best = c;
      }
    }
    return best;
  }
  if (lb_ == LoadBalancing::kEcmp) return candidates[ecmp_pick(flow_hash(p), count)];
  // A counter through a mixer: deterministic, independent of other switches (so a run
  // split over partitions draws the same choices), and spread like random.
  const std::uint64_t h = mix64(salt_ + ++spray_counter_);
  return candidates[static_cast<std::uint32_t>(((h >> 32) * count) >> 32)];
}

void Switch::send_pfc(PortIndex to, std::uint8_t traffic_class, bool xoff) {
  Packet* f = sim_->packets().allocate();
  f->kind = PacketKind::kPause;
  f->traffic_class = traffic_class;
  f->payload = xoff ? 1 : 0;
  f->wire_bytes = 64;
  if (xoff) port(to).count_pause_sent(traffic_class);
  port(to).send_control(f);
}

void Switch::add_multicast_group(std::uint16_t id, std::vector<MulticastMember> members) {
  if (multicast_.size() <= id) multicast_.resize(static_cast<std::size_t>(id) + 1);
  multicast_[id] = std::move(members);
}

bool Switch::in_network(Packet* p, PortIndex in_port) {
  if (p->in_network == InNetwork::kReduce) {
    if (!reduces()) return false;
    // The contribution is taken into the sum: its buffer is free at once.
    if (credit_port(in_port)) port(in_port).owe_credits(p->ingress_class, p->wire_bytes);
    if (!sums_.add(p->dst, p->recv_slot, p->seq, p->group)) {
      sim_->packets().release(p);
      return true;
    }
    // The last one: the sum goes through the reduction engine, then on to its owner.
    ++counters_.packets_reduced;
    p->in_network = InNetwork::kReduced;
    p->ingress_port = kNoPort;
    port(engine_port_).enqueue(p, /*granted=*/true);
    return true;
  }
  if (p->in_network == InNetwork::kReduceAll) {
    // SHARP: sums for every member of the group, if this switch reduces and holds it.
    if (!reduces() || !has_multicast_group(p->group)) return false;
    if (credit_port(in_port)) port(in_port).owe_credits(p->ingress_class, p->wire_bytes);
    const auto needed = static_cast<std::uint32_t>(multicast_[p->group].size());
    if (!sums_.add(0x80000000u | p->group, p->recv_slot, p->seq, needed)) {
      sim_->packets().release(p);
      return true;
    }
    ++counters_.packets_reduced;
    p->in_network = InNetwork::kReducedAll;
    p->ingress_port = kNoPort;
    port(engine_port_).enqueue(p, /*granted=*/true);
    return true;
  }
  if (p->in_network == InNetwork::kMulticast || p->in_network == InNetwork::kReducedAll) {
    if (!has_multicast_group(p->group)) return false;
    if (p->in_network == InNetwork::kReducedAll) {
      // Back from the engine: the copies carry the sum's name.
      p->src = kSumSource;
      p->sequence = p->recv_slot;
    }
    const std::vector<MulticastMember>& members = multicast_[p->group];
    // Copies for all members but the last; the packet itself (which holds its ingress
    // buffer until it leaves) goes to the last.
    for (std::size_t i = 0; i + 1 < members.size(); ++i) {
      Packet* copy = sim_->packets().allocate();
      const std::uint32_t index = copy->pool_index;
      *copy = *p;
      copy->pool_index = index;
      copy->in_network = InNetwork::kReplica;
      copy->dst = members[i].host;
      copy->dst_group = members[i].group;
      copy->ingress_port = kNoPort;
      ++counters_.packets_replicated;
      forward(copy, kNoPort, in_port);
    }
    p->in_network = InNetwork::kReplica;
    p->dst = members.back().host;
    p->dst_group = members.back().group;
    forward(p, in_port);
    return true;
  }
  return false;
}

void Switch::receive(Packet* p, PortIndex in_port) {
  if (p->kind == PacketKind::kPause) {
    // PFC from the neighbour on this port: it governs our egress toward it.
    port(in_port).set_paused(p->traffic_class, p->payload != 0);
    sim_->packets().release(p);
    return;
  }
  if (p->kind == PacketKind::kCredit) {
    port(in_port).credits_returned(p->traffic_class, p->payload);
    sim_->packets().release(p);
    return;
  }
  p->ingress_port = in_port;
  p->ingress_class = p->traffic_class;
  ++p->hops;
  if (p->in_network != InNetwork::kNone && in_network(p, in_port)) return;
  forward(p, in_port);
}

void Switch::forward(Packet* p, PortIndex in_port, PortIndex arrived_by) {
  const std::uint32_t set = routes_.set_for(p->dst, p->dst_group);
  const std::uint32_t first = routes_.set_offset[set];
  const std::uint32_t count = routes_.set_offset[set + 1] - first;
  if (count == 0) {
    // No route: the packet dies here. Compiled routing never leaves this case.
    ++counters_.unroutable;
    if (in_port != kNoPort && credit_port(in_port)) port(in_port).owe_credits(p->ingress_class, p->wire_bytes);
    sim_->packets().release(p);
    return;
  }
  const PortIndex* candidates = routes_.ports.data() + first;
  const PortIndex out = count == 1 ? candidates[0] : choose(*p, candidates, count);
  EgressPort& egress = port(out);
  if (!port_dimension_.empty() && port_dimension_[out] != kNoDimension) {
    // A torus link on both ends carries one dimension: the port it came by says which
    // the packet travelled in, and turning into another starts it on class 0 again.
    const std::uint8_t travelled = arrived_by < port_dimension_.size() ? port_dimension_[arrived_by] : kNoDimension;
    if (travelled != port_dimension_[out]) p->traffic_class = 0;
    if (port_dateline_[out]) p->traffic_class = 1;
  }
  if (in_port == kNoPort || credit_port(in_port)) {
    // A copy made here (its room is the original's), or it came on credits: the buffer was granted before it was sent, so it is taken
    // whatever the egress queue holds (at most the credits of the links feeding it).
    egress.enqueue(p, /*granted=*/true);
    return;
  }
  if (mmu_) {
    const SharedBufferMmu::Decision d = mmu_->admit(in_port, p->ingress_class, p->wire_bytes);
    if (!d.admitted) {
      ++counters_.buffer_drops;
      egress.count_drop(p);
      return;
    }
    if (mmu_->used() > counters_.max_buffer_bytes) counters_.max_buffer_bytes = mmu_->used();
    if (d.send_xoff) send_pfc(in_port, p->ingress_class, true);
  }
  egress.enqueue(p);
}

namespace {
// Every line of a small table (its first eight lines where it is larger: a custom
// graph's switch may have thousands of sets, and one arrival reads two of them).
template <typename T>
void prefetch_all(const std::vector<T>& v) {
  if (v.empty()) return;
  const auto from = reinterpret_cast<std::uintptr_t>(v.data()) & ~std::uintptr_t{63};
  const auto to = std::min(reinterpret_cast<std::uintptr_t>(v.data() + v.size()), from + 8 * 64);
  for (std::uintptr_t line = from; line < to; line += 64) __builtin_prefetch(reinterpret_cast<const void*>(line));
}
}  // namespace

// Prefetch stages (see EventHandler::prefetch_next): the first reads this switch's first
// lines and the packet, and asks for the route rows, the set table and candidate lists,
// the port list (where the ports are not side by side) and the buffer's group; the
// second works out the egress port from those (ECMP or a single candidate: spray and
// adaptive draw state, which a prefetch must not move) and asks for its lines and the
// buffer's counters. The packet may be stale, so every index is checked.
void Switch::prefetch_arrival(const Packet& p, PortIndex in_port) const {
  const std::uint32_t i = p.dst - routes_.first_host;
  if (i < routes_.by_host.size()) __builtin_prefetch(&routes_.by_host[i]);
  if (p.dst_group < routes_.by_group.size()) __builtin_prefetch(&routes_.by_group[p.dst_group]);
  // The set table and the candidate lists whole: a few lines (at k=32 a core switch's
  // 33 sets take three), and which of them the route names is known a stage later.
  prefetch_all(routes_.set_offset);
  prefetch_all(routes_.ports);
  if (!ports_side_by_side_) prefetch_all(ports_);  // (side by side, no list is read)
  if (mmu_) mmu_->prefetch_group(in_port, p.traffic_class);
}

void Switch::prefetch_arrival_more(const Packet& p, PortIndex /*in_port*/) const {
  if (p.kind == PacketKind::kPause || p.kind == PacketKind::kCredit) return;
  const std::span<const PortIndex> candidates = routes_.to_checked(p.dst, p.dst_group);
  const auto count = static_cast<std::uint32_t>(candidates.size());
  PortIndex out;
  if (count == 1) {
    out = candidates[0];
  } else if (count > 1 && lb_ == LoadBalancing::kEcmp) {
    out = candidates[ecmp_pick(flow_hash(p), count)];
  } else {
    return;
  }
  if (out < ports_.size()) port(out).prefetch_enqueue();
}

void Switch::prefetch_departure(const Departure& d) const {
  if (mmu_ && d.ingress_port != kNoPort) mmu_->prefetch_group(d.ingress_port, d.ingress_class);
}

void Switch::on_departure(const Departure& d) {
  if (d.ingress_port == kNoPort) return;  // made here: it held no ingress buffer
  if (credit_port(d.ingress_port)) {
    port(d.ingress_port).owe_credits(d.ingress_class, d.wire_bytes);
    return;
  }
  if (mmu_ && mmu_->release(d.ingress_port, d.ingress_class, d.wire_bytes)) send_pfc(d.ingress_port, d.ingress_class, false);
}

}  // namespace fabricsim
