#include "sim/flow/flow_routes.h"

#include <algorithm>
#include <bit>
#include <map>
#include <stdexcept>

namespace fabricsim {

FlowRouter::FlowRouter(const Network& net) : net_(&net) {
  // Each node's ports, in order, and the direction each feeds.
  const auto& dirs = net.directions();
  host_first_.assign(net.host_count() + 1, 0);
  switch_first_.assign(net.switch_count() + 1, 0);
  for (HostId h = 0; h < net.host_count(); ++h) host_first_[h + 1] = host_first_[h] + static_cast<std::uint32_t>(net.nic(h).port_count());
  for (std::uint32_t s = 0; s < net.switch_count(); ++s) {
    switch_first_[s + 1] = switch_first_[s] + static_cast<std::uint32_t>(net.switch_at(s).port_count());
  }
  host_dirs_.assign(host_first_.back(), UINT32_MAX);
  switch_dirs_.assign(switch_first_.back(), UINT32_MAX);
  engine_link_.assign(net.switch_count(), UINT32_MAX);
  for (std::uint32_t s = 0; s < net.switch_count(); ++s) {
    const Switch& sw = net.switch_at(s);
    if (!sw.reduces()) continue;
    engine_link_[s] = static_cast<std::uint32_t>(dirs.size() + engine_capacity_.size());
    engine_capacity_.push_back(static_cast<double>(sw.port(sw.engine_port()).bandwidth().bits_per_second) / 8e12);
  }
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    const LinkDirection& l = dirs[d];
    if (l.from.kind == NodeRef::Kind::kHost) {
      host_dirs_[host_first_[l.from.index] + l.from_port] = static_cast<std::uint32_t>(d);
    } else {
      switch_dirs_[switch_first_[l.from.index] + l.from_port] = static_cast<std::uint32_t>(d);
    }
  }
}

std::vector<double> FlowRouter::capacities() const {
  std::vector<double> c;
  c.reserve(net_->directions().size());
  for (const LinkDirection& d : net_->directions()) c.push_back(static_cast<double>(d.port->bandwidth().bits_per_second) / 8e12);
  c.insert(c.end(), engine_capacity_.begin(), engine_capacity_.end());
  return c;
}

std::vector<std::vector<std::uint32_t>> FlowRouter::parallel_link_groups() const {
  const auto& dirs = net_->directions();
  // Switches whose every link leads to an endpoint, each with the endpoints it reaches.
  std::vector<std::vector<std::uint32_t>> reaches(net_->switch_count());
  std::vector<char> leaf(net_->switch_count(), 1);
  for (const LinkDirection& d : dirs) {
    if (d.from.kind != NodeRef::Kind::kSwitch) continue;
    if (d.to.kind == NodeRef::Kind::kHost) reaches[d.from.index].push_back(d.to.index);
    else leaf[d.from.index] = 0;
  }
  std::map<std::vector<std::uint32_t>, std::uint32_t> domain_of;  // endpoints reached -> a number
  std::vector<std::uint32_t> domain(net_->switch_count(), UINT32_MAX);
  for (std::uint32_t s = 0; s < net_->switch_count(); ++s) {
    if (!leaf[s] || reaches[s].size() < 2) continue;
    std::sort(reaches[s].begin(), reaches[s].end());
    if (std::adjacent_find(reaches[s].begin(), reaches[s].end()) != reaches[s].end()) continue;  // parallel links
    domain[s] = domain_of.try_emplace(std::move(reaches[s]), static_cast<std::uint32_t>(domain_of.size())).first->second;
  }
  // The way back from switch s to endpoint h.
  std::unordered_map<std::uint64_t, std::uint32_t> back;
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    const LinkDirection& l = dirs[d];
    if (l.from.kind == NodeRef::Kind::kSwitch && l.to.kind == NodeRef::Kind::kHost && domain[l.from.index] != UINT32_MAX) {
      back.emplace((std::uint64_t{l.from.index} << 32) | l.to.index, static_cast<std::uint32_t>(d));
    }
  }
  std::vector<std::vector<std::uint32_t>> groups;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;  // (domain, direction)
  for (HostId h = 0; h < net_->host_count(); ++h) {
    out.clear();
    for (std::uint32_t i = host_first_[h]; i < host_first_[h + 1]; ++i) {
      const std::uint32_t d = host_dirs_[i];
      if (d == UINT32_MAX || dirs[d].to.kind != NodeRef::Kind::kSwitch) continue;
      if (domain[dirs[d].to.index] != UINT32_MAX) out.emplace_back(domain[dirs[d].to.index], d);
    }
    std::sort(out.begin(), out.end());
    for (std::size_t a = 0; a < out.size();) {
      std::size_t b = a;
      while (b < out.size() && out[b].first == out[a].first) ++b;
      if (b - a >= 2) {
        std::vector<std::uint32_t> up, down;
        for (std::size_t k = a; k < b; ++k) {
          up.push_back(out[k].second);
          const auto it = back.find((std::uint64_t{dirs[out[k].second].to.index} << 32) | h);
          if (it != back.end()) down.push_back(it->second);
        }
        groups.push_back(std::move(up));
        if (down.size() == b - a) groups.push_back(std::move(down));
      }
      a = b;
    }
  }
  return groups;
}

FlowRouter::Walk FlowRouter::walk(NodeRef from, HostId to, std::uint32_t hash, std::int64_t packet, double scale,
                                  std::vector<FlowModel::Hop>& hops) const {
  const std::uint32_t group = net_->host_groups().empty() ? 0 : net_->host_groups()[to];
  const auto& dirs = net_->directions();
  Walk result;
  bool arrived = false;
  std::vector<Reach>& frontier = frontier_;
  std::vector<Reach>& next = next_;
  std::vector<std::pair<PortIndex, double>>& out = out_;
  frontier.assign(1, {from, 1.0, 0, 0});
  for (int level = 0; !frontier.empty(); ++level) {
    if (level > 256) throw std::logic_error("a routing loop in the flow model's walk");
    next.clear();
    for (const Reach& r : frontier) {
      if (r.node == NodeRef::host(to)) {
        if (!arrived || r.delay - serialization(packet, Bandwidth{r.slowest}) >
                            result.delay - serialization(packet, Bandwidth{result.slowest_bps})) {
          result.delay = r.delay;
          result.slowest_bps = r.slowest;
        }
        arrived = true;
        continue;
      }
      out.clear();
      if (r.node.kind == NodeRef::Kind::kHost) {
        if (r.node != from) throw std::logic_error("the flow model's walk reached another endpoint");
        // An endpoint's packets round-robin over its free ports: each carries its
        // bandwidth's share.
        const Nic& n = net_->nic(r.node.index);
        const std::uint64_t ports = n.ports_toward(to);
        double total = 0;
        for (std::uint64_t rest = ports; rest != 0; rest &= rest - 1) {
          total += static_cast<double>(n.port(static_cast<PortIndex>(std::countr_zero(rest))).bandwidth().bits_per_second);
        }
        for (std::uint64_t rest = ports; rest != 0; rest &= rest - 1) {
          const auto p = static_cast<PortIndex>(std::countr_zero(rest));
          out.push_back({p, static_cast<double>(n.port(p).bandwidth().bits_per_second) / total});
        }
      } else {
        const Switch& s = net_->switch_at(r.node.index);
        const auto candidates = s.routes().to(to, group);
        if (candidates.empty()) continue;  // unroutable here: that part never arrives
        if (candidates.size() == 1) {
          out.push_back({candidates[0], 1.0});
        } else if (s.load_balancing() == LoadBalancing::kEcmp) {
          hashed_ = true;
          out.push_back({candidates[s.ecmp_pick(hash, static_cast<std::uint32_t>(candidates.size()))], 1.0});
        } else {
          for (PortIndex p : candidates) out.push_back({p, 1.0 / static_cast<double>(candidates.size())});
        }
      }
      for (const auto& [port, share] : out) {
        const std::uint32_t d = direction(r.node, port);
        const LinkDirection& l = dirs[d];
        const Bandwidth bw = l.port->bandwidth();
        const double weight = r.weight * share;
        hops.push_back({d, weight * scale});
        next.push_back({l.to, weight, r.delay + l.link->latency() + serialization(packet, bw),
                        r.slowest == 0 ? bw.bits_per_second : std::min(r.slowest, bw.bits_per_second)});
      }
    }
    // Parts that meet at a node go on as one.
    std::sort(next.begin(), next.end(), [](const Reach& a, const Reach& b) {
      return a.node.kind != b.node.kind ? a.node.kind < b.node.kind : a.node.index < b.node.index;
    });
    frontier.clear();
    for (const Reach& r : next) {
      if (!frontier.empty() && frontier.back().node == r.node) {
        Reach& f = frontier.back();
        f.weight += r.weight;
        f.delay = std::max(f.delay, r.delay);
        f.slowest = std::min(f.slowest, r.slowest);
      } else {
        frontier.push_back(r);
      }
    }
  }
  if (!arrived) throw std::logic_error("the flow model found no route to the destination");
  return result;
}

std::uint64_t FlowRouter::queue_pair_turn(const Message& m) {
  // GPU pair and connection (host numbers below 2^24, connections below 2^15).
  return FlowModel::kQueuePairTurn | (std::uint64_t{m.src & 0xffffffu} << 39) | (std::uint64_t{m.dst & 0xffffffu} << 15) |
         (m.connection & 0x7fffu);
}

FlowModel::Route FlowRouter::route(const Message& m) const {
  const NicConfig& nic = net_->params().nic;
  const std::int64_t packet = std::min<std::int64_t>(nic.mtu, std::max<std::int64_t>(0, m.bytes)) + nic.header_bytes;
  if (m.in_network != InNetwork::kNone) return in_network_route(m, packet);
  // Routes that no hash chose (one path, or split evenly) are the same for every full-size
  // message between two endpoints: kept, up to a bound.
  const bool full = m.bytes >= nic.mtu;
  const std::uint64_t pair = (std::uint64_t{m.src} << 32) | m.dst;
  if (full) {
    if (auto it = cache_.find(pair); it != cache_.end()) {
      // The pair's route, on this message's own queue pair (its connection).
      FlowModel::Route cached = it->second;
      if (cached.posted) cached.in_turn = queue_pair_turn(m);
      return cached;
    }
  }
  hashed_ = false;
  std::vector<FlowModel::Hop>& hops = hops_;
  hops.clear();
  FlowModel::Route route;
  const Walk data = walk(NodeRef::host(m.src), m.dst, message_hash(m.src, m.sequence), packet, 1.0, hops);
  // The last byte leaves the bottleneck; the packet it ends still has the hops after it.
  route.deliver_delay = data.delay - serialization(packet, Bandwidth{data.slowest_bps});
  // Acks: ack_bytes per ack_interval data packets, back the way ECMP sends them.
  const double ack_share = static_cast<double>(nic.ack_bytes) / (static_cast<double>(nic.ack_interval) * static_cast<double>(packet));
  route.ack_delay = walk(NodeRef::host(m.dst), m.src, message_hash(m.src, m.sequence, /*answer=*/true), nic.ack_bytes, ack_share, hops).delay;
  if (!rdma_port_.empty() && rdma_port_[m.src] >= 0 && rdma_port_[m.dst] >= 0 &&
      ((net_->nic(m.src).ports_toward(m.via) >> rdma_port_[m.src]) & 1u)) {
    const LinkDirection& up = net_->directions()[direction(NodeRef::host(m.src), static_cast<PortIndex>(rdma_port_[m.src]))];
    const LinkDirection& down = net_->directions()[direction(NodeRef::host(m.dst), static_cast<PortIndex>(rdma_port_[m.dst]))];
    const Time request = serialization(nic.ack_bytes, up.port->bandwidth()) + up.link->latency();
    const Time completion = serialization(nic.ack_bytes, down.port->bandwidth());
    route.deliver_delay += 2 * request + completion;
    route.ack_delay = std::max<Time>(0, route.ack_delay - 2 * (completion + down.link->latency()) -
                                            serialization(packet, down.port->bandwidth()));
    // As the packet model's queue pairs: the GPU goes on once it has posted; one queue
    // pair (GPU pair and connection) sends its messages in turn, each once the one before
    // has left.
    route.posted = true;
    route.in_turn = queue_pair_turn(m);
    route.turn_bytes = INT64_MAX;
  }
  merge_hops(hops, route);
  set_window(m.src, route);
  if (full && !hashed_ && cache_.size() < kMaxCachedRoutes) cache_.emplace(pair, route);
  return route;
}

FlowModel::Route FlowRouter::ring_route(const Message& m, const std::vector<std::pair<HostId, HostId>>& edges,
                                        std::int64_t chunk, std::vector<std::vector<FlowModel::Hop>>* edge_hops) const {
  FlowModel::Route ring;
  std::vector<FlowModel::Hop> hops;
  if (edge_hops != nullptr) edge_hops->clear();
  for (const auto& [from, to] : edges) {
    Message edge = m;
    edge.src = from;
    edge.dst = edge.via = to;
    edge.bytes = chunk;
    const FlowModel::Route r = route(edge);
    // Through RDMA NICs, the ring's sends take their queue pairs' turns: the ring takes
    // its first edge's.
    if (hops.empty() && FlowModel::queue_pair_turn(r.in_turn)) {
      ring.in_turn = r.in_turn;
      ring.turn_bytes = r.turn_bytes;
    }
    hops.insert(hops.end(), r.hops.begin(), r.hops.end());
    if (edge_hops != nullptr) edge_hops->push_back(r.hops);
    ring.deliver_delay = std::max(ring.deliver_delay, r.deliver_delay);
    ring.ack_delay = std::max(ring.ack_delay, r.ack_delay);
    ring.mean_edge_delay += r.deliver_delay;
  }
  if (!edges.empty()) ring.mean_edge_delay /= static_cast<Time>(edges.size());
  merge_hops(hops, ring);
  return ring;
}

FlowModel::Route FlowRouter::in_network_route(const Message& m, std::int64_t packet) const {
  if (m.in_network != InNetwork::kMulticast && m.in_network != InNetwork::kReduce) {
    throw std::logic_error("the flow model does not carry SHARP sums (kReduceAll)");
  }
  const auto& dirs = net_->directions();
  const Nic& n = net_->nic(m.src);
  const std::uint64_t ports = n.ports_toward(m.via);
  double total = 0;
  for (std::uint64_t rest = ports; rest != 0; rest &= rest - 1) {
    total += static_cast<double>(n.port(static_cast<PortIndex>(std::countr_zero(rest))).bandwidth().bits_per_second);
  }
  FlowModel::Route route;
  route.acknowledged = false;
  std::vector<FlowModel::Hop> hops;
  const std::uint32_t hash = message_hash(m.src, m.sequence);
  for (std::uint64_t rest = ports; rest != 0; rest &= rest - 1) {
    // Striped by address over the sender's links in proportion to their bandwidth.
    const auto port = static_cast<PortIndex>(std::countr_zero(rest));
    const std::uint32_t d = direction(NodeRef::host(m.src), port);
    const LinkDirection& first = dirs[d];
    const double share = static_cast<double>(first.port->bandwidth().bits_per_second) / total;
    const Bandwidth first_bw = first.port->bandwidth();
    const Time first_delay = first.link->latency() + serialization(packet, first_bw);
    hops.push_back({d, share});
    if (first.to.kind != NodeRef::Kind::kSwitch) throw std::logic_error("an in-network transfer to an endpoint");
    const std::uint32_t sw = first.to.index;
    std::vector<FlowModel::Hop> unloaded;
    const auto deliver = [&](HostId to, double scale, Time before, std::int64_t slowest, bool load = true) {
      const Walk w = walk(NodeRef::sw(sw), to, hash, packet, scale, load ? hops : unloaded);
      const std::int64_t least = std::min(slowest, w.slowest_bps == 0 ? slowest : w.slowest_bps);
      route.deliver_delay = std::max(route.deliver_delay, before + w.delay - serialization(packet, Bandwidth{least}));
    };
    if (m.in_network == InNetwork::kMulticast) {
      if (!net_->switch_at(sw).has_multicast_group(m.group)) throw std::logic_error("a multicast through a switch without its group");
      for (HostId member : net_->multicast_members(m.group)) deliver(member, share, first_delay, first_bw.bits_per_second);
    } else {
      // One contribution of m.group: its share of the sum through the engine, timed on
      // to the owner but not loaded there. Max-min equalizes rates, so a contribution
      // charged 1/n of the sum's way to its owner would be held to the fair share of
      // that link (which the multicasts fill) although the sum is one stream on it, a
      // 1/n of what the multicasts carry there: NVLS AllReduce came out 20% slow.
      const std::uint32_t engine = engine_link_[sw];
      if (engine == UINT32_MAX) throw std::logic_error("a contribution to a switch that does not reduce");
      const double part = share / static_cast<double>(std::max<std::uint16_t>(1, m.group));
      hops.push_back({engine, part});
      const double engine_bps = engine_capacity_[engine - dirs.size()] * 8e12;
      const Bandwidth engine_bw{static_cast<std::int64_t>(engine_bps)};
      deliver(m.dst, part, first_delay + ns(1) + serialization(packet, engine_bw),
              std::min(first_bw.bits_per_second, engine_bw.bits_per_second), /*load=*/false);
    }
  }
  merge_hops(hops, route);
  set_window(m.src, route);
  route.in_turn = m.src;
  route.turn_bytes = static_cast<std::int64_t>(std::popcount(ports)) * packet;
  return route;
}

void FlowRouter::set_window(HostId src, FlowModel::Route& route) const {
  // The sender's widest link: where it is credit-based, the sender may run that far ahead.
  const auto& dirs = net_->directions();
  double widest = 0;
  for (const FlowModel::Hop& h : route.hops) {
    if (h.link >= dirs.size()) continue;  // a reduction engine's: no cable
    const LinkDirection& d = dirs[h.link];
    if (d.from != NodeRef::host(src) || h.weight <= widest) continue;
    widest = h.weight;
    route.window_link = d.port->credit_based() ? h.link : UINT32_MAX;
    route.window = d.port->credit_based() ? static_cast<double>(d.port->credit_bytes()) : 0;
  }
}

void FlowRouter::merge_hops(std::vector<FlowModel::Hop>& hops, FlowModel::Route& route) {
  std::sort(hops.begin(), hops.end(), [](const FlowModel::Hop& a, const FlowModel::Hop& b) { return a.link < b.link; });
  for (const FlowModel::Hop& h : hops) {
    if (!route.hops.empty() && route.hops.back().link == h.link) {
      route.hops.back().weight += h.weight;
    } else {
      route.hops.push_back(h);
    }
  }
}

}  // namespace fabricsim
