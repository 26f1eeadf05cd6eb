#include "sim/network.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "sim/flow/flow_model.h"
#include "sim/flow/flow_routes.h"
#include "sim/core/rng.h"

namespace fabricsim {

void Network::set_partitions(std::vector<Simulator*> partitions, std::vector<std::uint32_t> host_partition,
                             std::vector<std::uint32_t> switch_partition) {
  if (!nics_.empty() || !switches_.empty()) throw std::logic_error("partitions are set before any node is added");
  partitions_ = std::move(partitions);
  host_partition_ = std::move(host_partition);
  switch_partition_ = std::move(switch_partition);
  outboxes_.resize(partitions_.size());
  for (Outbox& o : outboxes_) o.to.resize(partitions_.size());
  messages_.set_locking(partitions_.size() > 1);  // partitions make and free messages at once
  cut_links_.resize(partitions_.size());
  // Switches stamp INT into whichever pool their packets are in.
  if (params_.nic.congestion_control && params_.nic.congestion_control->wants_telemetry()) {
    for (Simulator* s : partitions_) s->packets().enable_telemetry();
  }
}

void Network::deliver_cut_packets(std::uint32_t q) {
  PacketPool& pool = partition(q).packets();
  for (Outbox& from : outboxes_) {
    std::vector<CrossPacket>& in = from.to[q];
    for (const CrossPacket& c : in) {
      Packet* p = pool.allocate();
      const std::uint32_t index = p->pool_index;
      *p = c.packet;
      p->pool_index = index;
      if (pool.telemetry_enabled()) pool.telemetry(p) = c.telemetry;
      cut_links_[q][c.link]->accept(c.arrives, p);
    }
    in.clear();
  }
}

NicCounters Network::endpoint_counters() const {
  NicCounters total;
  for (const Nic& nic : nics_) add_counters(total, nic.counters());
  add_counters(total, rdma_nic_counters());
  return total;
}

NicCounters Network::rdma_nic_counters() const {
  NicCounters total;
  for (const Nic& nic : rdma_nics_) add_counters(total, nic.counters());
  return total;
}

SwitchCounters Network::switch_counters() const {
  SwitchCounters total;
  for (std::uint32_t s = 0; s < switches_.size(); ++s) {
    if (!is_rdma_nic(s)) add_counters(total, switch_at(s).counters());
  }
  return total;
}

std::size_t Network::cut_link_count() const {
  std::size_t n = 0;
  for (const auto& links : cut_links_) n += links.size();
  return n / 2;  // cables: both directions are cut
}

HostId Network::add_host() {
  const auto id = static_cast<HostId>(nics_.size());
  if (!partitions_.empty() && id >= host_partition_.size()) throw std::logic_error("host has no partition");
  Nic& nic = nics_.emplace_back(sim_of(NodeRef::host(id)), id, params_.nic, &dispatcher_);
  nic.set_receive_locking(partitions_.size() > 1);
  nic.set_order_keys(next_order_key_);
  next_order_key_ += Nic::kOrderKeys;
  return id;
}

std::uint32_t Network::add_switch() {
  const auto id = static_cast<std::uint32_t>(switches_.size());
  std::uint64_t s = params_.salt_seed ^ (0x5eed0000ull + id);
  if (!partitions_.empty() && id >= switch_partition_.size()) throw std::logic_error("switch has no partition");
  switches_.emplace_back(sim_of(NodeRef::sw(id)), splitmix64(s), params_.load_balancing);
  return id;
}

void Network::make_rdma_nic(std::uint32_t s) {
  if (s >= switches_.size() || switches_[s].port_count() != 0) throw std::logic_error("an RDMA NIC replaces a switch before its links");
  if (rdma_nic_index_.size() <= s) rdma_nic_index_.resize(switches_.size(), kNoNic);
  if (rdma_nic_index_[s] != kNoNic) return;
  rdma_nic_index_[s] = static_cast<std::uint32_t>(rdma_nics_.size());
  rdma_nic_switch_.push_back(s);
  // It sends as the GPUs behind it (their names and groups), never as itself; the
  // network's dispatcher hears nothing from it: its GPUs are told by completions.
  Nic& nic = rdma_nics_.emplace_back(sim_of(NodeRef::nic(s)), UINT32_MAX, params_.nic, nullptr);
  nic.set_rdma_nic();
  nic.set_receive_locking(partitions_.size() > 1);  // senders elsewhere open its receives
  nic.set_order_keys(next_order_key_);
  next_order_key_ += Nic::kOrderKeys;
}

PacketSink& Network::sink(NodeRef n) {
  if (n.kind == NodeRef::Kind::kHost) return nics_.at(n.index);
  if (n.kind == NodeRef::Kind::kNic) return rdma_nic(n.index);
  return switches_.at(n.index);
}

void Network::reserve_switch_ports(std::uint32_t s, std::size_t ports) {
  if (s >= switches_.size()) throw std::invalid_argument("no such switch");
  if (switches_[s].port_count() > 0) throw std::logic_error("ports are reserved before a switch's first link");
  if (switch_ports_.size() <= s) switch_ports_.resize(switches_.size());
  switch_ports_[s] = ports > 0 ? std::make_unique<PortBlock>(ports) : nullptr;
}

EgressPort& Network::make_port(NodeRef n, Bandwidth bandwidth, std::int64_t queue_capacity_bytes) {
  if (n.kind == NodeRef::Kind::kSwitch && n.index < switch_ports_.size() && switch_ports_[n.index] &&
      !switch_ports_[n.index]->full()) {
    return switch_ports_[n.index]->emplace(sim_of(n), bandwidth, params_.traffic_classes, queue_capacity_bytes);
  }
  return ports_.emplace_back(sim_of(n), bandwidth, params_.traffic_classes, queue_capacity_bytes);
}

PortIndex Network::add_port(NodeRef n, EgressPort& port) {
  if (n.kind == NodeRef::Kind::kSwitch) return switches_.at(n.index).add_port(port);
  if (n.kind == NodeRef::Kind::kNic) return rdma_nic(n.index).add_port(port);
  return nics_.at(n.index).add_port(port);
}

std::pair<std::size_t, std::size_t> Network::connect(NodeRef a, NodeRef b, Bandwidth bandwidth, Time latency,
                                                     std::int64_t queue_capacity_bytes, std::int64_t credit_bytes) {
  if (a == b) throw std::invalid_argument("a link needs two different ends");
  if (bandwidth.bits_per_second <= 0) throw std::invalid_argument("link bandwidth must be positive");
  if (latency < 0) throw std::invalid_argument("link latency must not be negative");
  const auto capacity_at = [&](NodeRef n) {
    return n.kind != NodeRef::Kind::kSwitch ? EgressPort::kUnlimited : queue_capacity_bytes;
  };
  EgressPort& ab = make_port(a, bandwidth, capacity_at(a));
  EgressPort& ba = make_port(b, bandwidth, capacity_at(b));
  const PortIndex pa = add_port(a, ab);
  const PortIndex pb = add_port(b, ba);
  // Each direction runs where it arrives; across partitions it is cut.
  Link& lab = links_.emplace_back(sim_of(b), latency, sink(b), pb);
  Link& lba = links_.emplace_back(sim_of(a), latency, sink(a), pa);
  const std::uint32_t qa = partition_of(a), qb = partition_of(b);
  if (qa != qb) {
    lab.cut(cut_ends_.emplace_back(Link::CutEnd{&sim_of(a), &outboxes_[qa], qb, static_cast<std::uint32_t>(cut_links_[qb].size())}));
    cut_links_[qb].push_back(&lab);
    lba.cut(cut_ends_.emplace_back(Link::CutEnd{&sim_of(b), &outboxes_[qb], qa, static_cast<std::uint32_t>(cut_links_[qa].size())}));
    cut_links_[qa].push_back(&lba);
    lookahead_ = std::min(lookahead_, latency);
  }
  ab.set_order(next_order_key());
  ba.set_order(next_order_key());
  lab.set_order(next_order_key());
  lba.set_order(next_order_key());
  ab.attach(lab);
  ba.attach(lba);
  if (credit_bytes > 0) {
    // Credit updates in batches of four packets where the credits leave that much slack
    // (the default, round trip + eight packets, does), else as few as the credits allow.
    const std::int64_t packet = static_cast<std::int64_t>(params_.nic.mtu) + params_.nic.header_bytes;
    if (credit_bytes < packet) throw std::invalid_argument("link credits below one packet (mtu + header_bytes)");
    const std::int64_t batch = std::min(4 * packet, credit_bytes - packet);
    ab.set_credits(credit_bytes, batch);
    ba.set_credits(credit_bytes, batch);
    if (a.kind == NodeRef::Kind::kHost) nics_[a.index].note_credit_port(pa);
    if (b.kind == NodeRef::Kind::kHost) nics_[b.index].note_credit_port(pb);
    if (a.kind == NodeRef::Kind::kNic) rdma_nic(a.index).note_credit_port(pa);
    if (b.kind == NodeRef::Kind::kNic) rdma_nic(b.index).note_credit_port(pb);
  }
  for (const auto& [gpu, gpu_port, nic] : {std::tuple{a, pa, b}, std::tuple{b, pb, a}}) {
    if (gpu.kind != NodeRef::Kind::kHost || nic.kind != NodeRef::Kind::kNic) continue;
    // A GPU's link to its RDMA NIC: what it sends that way, it posts to the NIC.
    if (host_rdma_nic_.size() < nics_.size()) host_rdma_nic_.resize(nics_.size(), kNoNic);
    if (host_rdma_nic_[gpu.index] != kNoNic) throw std::invalid_argument("a GPU links to one RDMA NIC at most");
    host_rdma_nic_[gpu.index] = rdma_nic_index_[nic.index];
    nics_[gpu.index].note_nic_port(gpu_port);
  }
  directions_.push_back({a, pa, b, pb, &ab, &lab});
  directions_.push_back({b, pb, a, pa, &ba, &lba});
  return {directions_.size() - 2, directions_.size() - 1};
}

void Network::finish_switches() {
  const std::int64_t packet = static_cast<std::int64_t>(params_.nic.mtu) + params_.nic.header_bytes;
  // Headroom per port: what can still arrive after we send XOFF, a round trip of the
  // link at its rate (the PAUSE's trip there, the packets' trip back), plus the packet
  // being sent when the PAUSE lands and one more in our own pipeline. One pass over the
  // links fills every switch's ports.
  std::vector<std::vector<std::int64_t>> headroom(params_.shared_buffer ? switches_.size() : 0);
  for (std::uint32_t s = 0; s < headroom.size(); ++s) headroom[s].assign(switches_[s].port_count(), params_.buffer.headroom_bytes);
  if (params_.shared_buffer && params_.buffer.headroom_bytes == 0) {
    for (const LinkDirection& d : directions_) {
      if (d.from.kind != NodeRef::Kind::kSwitch) continue;
      const double bdp_bytes = static_cast<double>(d.port->bandwidth().bits_per_second) / 8 * to_seconds(2 * d.link->latency());
      headroom[d.from.index][d.from_port] = static_cast<std::int64_t>(bdp_bytes) + 2 * packet;
    }
  }
  for (std::uint32_t s = 0; s < switches_.size(); ++s) {
    Switch& sw = switches_[s];
    sw.set_ecn(params_.ecn, params_.ecn_by_speed);
    sw.find_credit_ports();
    if (params_.nic.congestion_control && params_.nic.congestion_control->wants_telemetry()) {
      for (PortIndex i = 0; i < sw.port_count(); ++i) sw.port(i).set_telemetry(true);
    }
    if (!params_.shared_buffer) continue;
    const std::int64_t reserve = params_.buffer.reserve_bytes > 0 ? params_.buffer.reserve_bytes : 2 * packet;
    const std::int64_t xon = params_.buffer.xon_offset_bytes > 0 ? params_.buffer.xon_offset_bytes : 2 * packet;
    sw.set_buffer(std::make_unique<SharedBufferMmu>(params_.buffer, sw.port_count(), params_.traffic_classes,
                                                    params_.pfc_classes_mask, std::move(headroom[s]), reserve, xon));
  }
}

MessageId Network::add_message(HostId src, HostId dst, std::int64_t bytes, std::uint8_t traffic_class) {
  MessageSpec spec;
  spec.src = src;
  spec.dst = dst;
  spec.bytes = bytes;
  spec.traffic_class = traffic_class;
  return add_message(spec);
}

MessageId Network::add_message(const MessageSpec& spec) {
  const HostId src = spec.src, dst = spec.dst;
  const std::int64_t bytes = spec.bytes;
  const std::uint8_t traffic_class = spec.traffic_class;
  if (src >= nics_.size() || dst >= nics_.size()) throw std::invalid_argument("message endpoint out of range");
  if (src == dst) throw std::invalid_argument("a message needs two different hosts");
  if (traffic_class >= params_.traffic_classes) throw std::invalid_argument("traffic class out of range");
  const MessageId id = messages_.add(src, dst, bytes, traffic_class, packets_for(bytes, params_.nic.mtu));
  Message& m = messages_[id];
  m.tag = spec.tag;
  m.shares = spec.shares;
  m.connection = spec.connection;
  m.rate_cap_bps = spec.rate_cap_bps;
  // The destination opens its receive before the first packet can leave (as an RDMA
  // receiver posts its buffer): the packets name the slot. Another process's endpoint
  // opens it from post()'s notice.
  if (flow_model_ == nullptr) {
    m.recv_slot = !by_notice_ || local_partition(receiver_partition(src, dst))
                      ? receiver_of(src, dst).open_receive(id, src, m.sequence, m.packets)
                      : kRemoteSlot;
  }
  return id;
}

void Network::set_local_partitions(std::vector<bool> local) {
  local_ = std::move(local);
  remote_opens_.assign(partition_count(), {});
  dispatcher_.set_on_remote_delivered([this](const Message& m) {
    const std::lock_guard<std::mutex> lock(remote_mutex_);
    remote_slots_.erase((std::uint64_t{m.src} << 32) | m.sequence);
  });
}

void Network::post_remote(MessageId id, const Message& m) {
  RemoteOpen r;
  r.src = m.src;
  r.dst = m.dst;
  r.sequence = m.sequence;
  r.packets = m.packets;
  r.tag = m.tag;
  r.receiver_key = m.receiver_observer != nullptr ? m.receiver_observer->observer_key() : 0;
  r.bytes = m.bytes;
  r.posted = m.posted;
  r.traffic_class = m.traffic_class;
  if (m.in_network != InNetwork::kNone || (m.receiver_observer != nullptr && r.receiver_key == 0)) {
    throw std::logic_error("message " + std::to_string(id) + " to another process has no name for its receiver");
  }
  remote_opens_[host_partition(m.src)].push_back(r);
}

void Network::open_remote(const RemoteOpen& r) {
  // The receive side's record: no sender here (its process keeps that side).
  const MessageId id = messages_.add(r.src, r.dst, r.bytes, r.traffic_class, r.packets, /*counted=*/false);
  Message& m = messages_[id];
  m.sequence = r.sequence;
  m.tag = r.tag;
  m.posted = r.posted;
  m.has_sender = false;
  if (r.receiver_key != 0) {
    const auto it = observers_.find(r.receiver_key);
    if (it == observers_.end()) throw std::logic_error("no receiver " + std::to_string(r.receiver_key) + " for a remote message");
    m.receiver_observer = it->second;
  }
  m.recv_slot = receiver_of(r.src, r.dst).open_receive(id, r.src, r.sequence, r.packets);
  const std::lock_guard<std::mutex> lock(remote_mutex_);
  remote_slots_[(std::uint64_t{r.src} << 32) | r.sequence] = m.recv_slot;
}

void Network::resolve_remote_slot(Packet& p) {
  // Only where its destination runs (it may pass through another process's switches).
  // A work request names the slot too: its RDMA NIC may run in the receiver's process.
  if ((p.kind != PacketKind::kData && p.kind != PacketKind::kWorkRequest) || p.recv_slot != kRemoteSlot ||
      !local_partition(receiver_partition(p.src, p.dst))) {
    return;
  }
  const std::lock_guard<std::mutex> lock(remote_mutex_);
  const auto it = remote_slots_.find((std::uint64_t{p.src} << 32) | p.sequence);
  p.recv_slot = it != remote_slots_.end() ? it->second : kNoSlot;  // kNoSlot: received whole already
}

void Network::register_observer(MessageObserver* o) {
  const std::lock_guard<std::mutex> lock(remote_mutex_);
  observers_[o->observer_key()] = o;
}

void Network::unregister_observer(const MessageObserver* o) {
  const std::lock_guard<std::mutex> lock(remote_mutex_);
  observers_.erase(o->observer_key());
}

void Network::post_flow(MessageId id, const Message& m) {
  std::int64_t wire = std::max<std::int64_t>(0, m.bytes) + static_cast<std::int64_t>(m.packets) * params_.nic.header_bytes;
  if (m.shares > 1) {
    // Each share is a message of its own on the wire: its own packets and headers.
    const std::int64_t each = std::max<std::int64_t>(0, m.bytes) / m.shares;
    wire = m.shares * (each + static_cast<std::int64_t>(packets_for(each, params_.nic.mtu)) * params_.nic.header_bytes);
  }
  FlowModel::Route route = flow_router_->route(m);
  route.shares = m.shares;
  route.cap = m.rate_cap_bps / 8e12;
  if (m.in_network == InNetwork::kMulticast) {
    auto it = flow_multicast_receives_.find(id);
    if (it != flow_multicast_receives_.end()) {
      route.deliver = std::move(it->second);
      flow_multicast_receives_.erase(it);
    }
  } else if (m.in_network == InNetwork::kReduce) {
    route.sum = m.recv_slot;
    route.sum_parts = m.group;
    if (m.awaits_delivery) route.deliver.push_back(id);
  }
  flow_model_->start(id, wire, m.bytes, route);
}

std::vector<Network::RingFlowTiming> Network::post_ring_flows(const std::vector<RingFlow>& rings, std::uint16_t shares,
                                                              KnownRingRoutes* known) {
  if (flow_model_ == nullptr || rings.empty()) throw std::logic_error("ring flows need flow fidelity and rings");
  for (const RingFlow& r : rings) {
    if (r.edges == nullptr || r.edges->empty()) throw std::logic_error("a ring flow needs edges");
    Message& m = messages_[r.id];
    m.posted = partition(host_partition(m.src)).now();
  }
  // A channel's own rate (a GPU's copy inside a node) holds every edge to it.
  const Message& first = messages_[rings.front().id];
  const double cap = first.rate_cap_bps > 0 ? first.rate_cap_bps / 8e12 : 0;
  if (known != nullptr && known->transfer_shares != nullptr && known->routes.size() == rings.size() && known->cap == cap) {
    return start_ring_flows(rings, known->routes, *known->transfer_shares, cap);
  }
  std::vector<const RingRoute*> routes;
  // Each edge's own links, kept while the collective's transfer shares are worked out
  // (only where a route or those shares are new).
  std::vector<std::vector<std::vector<FlowModel::Hop>>> edge_hops;
  for (const RingFlow& r : rings) {
    const Message& m = messages_[r.id];
    // A ring's route is worked out once per members, order and chunk and then kept: its
    // edges take the paths of the first collective over them, as NCCL keeps a
    // communicator's connections (and the ECMP paths of their queue pairs) for its life.
    auto cached = ring_routes_.find(std::forward_as_tuple(*r.edges, r.chunk, shares));
    if (cached == ring_routes_.end()) {
      edge_hops.resize(rings.size());
      RingRoute ring;
      ring.route = flow_router_->ring_route(m, *r.edges, r.chunk, &edge_hops[routes.size()]);
      ring.route.shares = std::max<std::uint16_t>(1, shares);
      ring.routed_as = m;
      cached = ring_routes_.emplace(std::make_tuple(*r.edges, r.chunk, shares), std::move(ring)).first;
    }
    routes.push_back(&cached->second);
  }
  auto shares_it = ring_transfer_shares_.find({routes, cap});
  if (shares_it == ring_transfer_shares_.end()) {
    edge_hops.resize(rings.size());
    for (std::size_t i = 0; i < rings.size(); ++i) {
      // Routed before, for another collective: again, as it was (the same message's hashes).
      if (edge_hops[i].empty()) flow_router_->ring_route(routes[i]->routed_as, *rings[i].edges, rings[i].chunk, &edge_hops[i]);
    }
    shares_it = ring_transfer_shares_.emplace(std::make_pair(routes, cap), ring_transfer_shares(edge_hops, cap, shares)).first;
  }
  if (known != nullptr) *known = KnownRingRoutes{routes, &shares_it->second, cap};
  return start_ring_flows(rings, routes, shares_it->second, cap);
}

std::vector<Network::RingFlowTiming> Network::start_ring_flows(const std::vector<RingFlow>& rings,
                                                               const std::vector<const RingRoute*>& routes,
                                                               const std::vector<double>& transfer_shares, double cap) {
  std::vector<RingFlowTiming> timings;
  timings.reserve(rings.size());
  for (std::size_t i = 0; i < rings.size(); ++i) {
    const RingRoute& ring = *routes[i];
    const FlowModel::Route& route = ring.route;
    if (ring.prepared.raw_hops == nullptr || ring.prepared.prepared_at != flow_model_->link_bundles_dissolved()) {
      ring.prepared = route;
      if (!flow_model_->prepare(ring.prepared, route.hops)) ring.prepared = {};
    }
    RingFlowTiming timing;
    timing.deliver_delay = route.deliver_delay;
    timing.mean_edge_delay = route.mean_edge_delay;
    timing.mean_transfer_share = transfer_shares[i];
    timings.push_back(timing);
    const Message& m = messages_[rings[i].id];
    FlowModel::Route posted = ring.prepared.raw_hops != nullptr ? ring.prepared : route;
    posted.cap = cap;
    posted.tells_start = true;
    if (FlowModel::queue_pair_turn(route.in_turn)) {
      // This ring's own: its first edge's GPU pair on its channel's connection, where each
      // collective over the ring takes its turn after the one before, as its sends would.
      Message first_edge = m;
      first_edge.src = rings[i].edges->front().first;
      first_edge.dst = rings[i].edges->front().second;
      posted.in_turn = FlowRouter::queue_pair_turn(first_edge);
    }
    flow_model_->start(rings[i].id, rings[i].wire_bytes, m.bytes, std::move(posted));
  }
  return timings;
}

std::vector<double> Network::ring_transfer_shares(const std::vector<std::vector<std::vector<FlowModel::Hop>>>& edge_hops,
                                                  double cap, std::uint16_t shares) const {
  std::unordered_map<std::uint32_t, double> load;  // every ring's edges' weight on a link
  const double each = std::max<std::uint16_t>(1, shares);
  for (const auto& ring : edge_hops) {
    for (const auto& hops : ring) {
      for (const FlowModel::Hop& h : hops) {
        if (h.link < directions_.size()) load[h.link] += h.weight * each;
      }
    }
  }
  std::vector<double> transfer_shares;
  for (const auto& ring : edge_hops) {
    double tightest = 0;
    double time_sum = 0;
    for (const auto& hops : ring) {
      double rate = cap;
      for (const FlowModel::Hop& h : hops) {
        if (h.link >= directions_.size()) continue;
        const double fair = static_cast<double>(directions_[h.link].port->bandwidth().bits_per_second) / 8e12 / load[h.link];
        rate = rate == 0 ? fair : std::min(rate, fair);
      }
      if (rate <= 0) continue;
      tightest = tightest == 0 ? rate : std::min(tightest, rate);
      time_sum += 1.0 / rate;
    }
    transfer_shares.push_back(tightest > 0 ? time_sum * tightest / static_cast<double>(ring.size()) : 1.0);
  }
  return transfer_shares;
}

}  // namespace fabricsim
