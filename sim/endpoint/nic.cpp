#include "sim/endpoint/nic.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstddef>
#include <numeric>
#include <stdexcept>

#include "sim/core/rng.h"
#include "sim/core/simulator.h"

namespace fabricsim {
namespace {
// An acknowledgement's `seq` for "every packet is here" (the sender takes the smaller of
// it and the message's length): the answer to a late copy of a message already received.
constexpr std::uint32_t kAllPackets = UINT32_MAX;

bool bit(const std::vector<std::uint64_t>& bits, std::uint32_t i) {
  return i / 64 < bits.size() && ((bits[i / 64] >> (i % 64)) & 1u);
}
}  // namespace

void Nic::set_order_keys(std::uint32_t first) {
  retransmit_timer_.set_order(first);
  rate_timer_.set_order(first + 1);
  pacer_.set_order(first + 2);
  sent_notifier_.set_order(first + 3);
  waker_.set_order(first + 4);
}

Nic::Nic(Simulator& sim, HostId host, const NicConfig& config, MessageObserver* observer)
    : sim_(&sim), host_(host), observer_(observer), cc_(config.congestion_control.get()), config_(config) {
  if (cc_ != nullptr) {
    cnp_interval_ = cc_->cnp_interval();
    telemetry_ = cc_->wants_telemetry();
    if (telemetry_) sim.packets().enable_telemetry();
  }
  fetch_window_packets_ = std::max<std::uint32_t>(1, config.fetch_window_bytes / std::max<std::uint32_t>(1, config.mtu));
  fetch_batch_packets_ = std::max<std::uint32_t>(1, fetch_window_packets_ / 4);
  retransmit_timer_.nic = rate_timer_.nic = pacer_.nic = sent_notifier_.nic = waker_.nic = this;
  waker_.fire = &Nic::on_waker;
  sent_notifier_.fire = &Nic::on_sent_notifier;
  retransmit_timer_.fire = &Nic::on_retransmit_timer;
  rate_timer_.fire = &Nic::on_rate_timer;
  pacer_.fire = &Nic::on_pacer;
}

PortIndex Nic::add_port(EgressPort& port) {
  if (ports_.size() == kMaxPorts) throw std::length_error("an endpoint has at most 64 ports");
  const auto index = static_cast<PortIndex>(ports_.size());
  ports_.push_back(&port);
  port.set_source(this, index);
  if (rdma_nic_) port.set_observer(this);
  return index;
}

void Nic::set_routes(RouteTable table, const std::vector<std::uint32_t>* host_group) {
  routes_ = std::move(table);
  host_group_ = host_group;
  set_mask_.assign(routes_.set_count(), 0);
  for (std::uint32_t s = 0; s < routes_.set_count(); ++s) {
    for (PortIndex p : routes_.set(s)) set_mask_[s] |= std::uint64_t{1} << p;
  }
  // The common endpoint, one port to one switch: the table says port 0 for every other
  // host and nothing for this one. Then asking it costs three lines of this endpoint's
  // that no packet needs, so it is not asked.
  via_port0_ = all_but_self_via_port0();
  have_routes_ = !via_port0_;
}

bool Nic::all_but_self_via_port0() const {
  const auto port0 = [&](std::uint32_t s) { return s < set_mask_.size() && set_mask_[s] == 1; };
  if (routes_.by_group.empty()) {
    if (!port0(routes_.default_set)) return false;
  } else {
    for (const std::uint32_t s : routes_.by_group) {
      if (!port0(s)) return false;
    }
  }
  // Per-host exceptions: this host's own must say no port (or every group's entry, port
  // 0, would answer for it); any other's port 0.
  bool self_seen = false;
  for (std::size_t i = 0; i < routes_.by_host.size(); ++i) {
    const HostId h = routes_.first_host + static_cast<HostId>(i);
    const std::uint32_t s = routes_.by_host[i];
    if (h == host_) {
      if (s == RouteTable::kNoException || s >= set_mask_.size() || set_mask_[s] != 0) return false;
      self_seen = true;
    } else if (s != RouteTable::kNoException && !port0(s)) {
      return false;
    }
  }
  return self_seen;
}

std::uint32_t Nic::wire_bytes_of(const SendState& m, std::uint32_t seq) const {
  const std::int64_t offset = static_cast<std::int64_t>(seq) * config_.mtu;
  return static_cast<std::uint32_t>(std::max<std::int64_t>(0, std::min<std::int64_t>(config_.mtu, m.bytes - offset))) + config_.header_bytes;
}

std::uint64_t Nic::ports_toward(HostId dst) const {
  if (have_routes_) return set_mask_[routes_.set_for(dst, group_of(dst))];
  if (via_port0_) return dst != host_ ? 1u : 0u;
  return ports_.size() == 1 && dst != host_ ? 1u : 0u;
}

double Nic::line_rate(std::uint64_t ports) const {
  double rate = 0;
  for (std::uint64_t rest = ports; rest != 0; rest &= rest - 1) {
    rate += static_cast<double>(ports_[static_cast<std::size_t>(std::countr_zero(rest))]->bandwidth().bits_per_second);
  }
  return rate;
}

void Nic::wake_ports() {
  for (EgressPort* p : ports_) p->wake();
}

void Nic::enter_rotation(std::uint32_t slot) {
  SendState& m = sends_[slot];
  if (m.sending) return;
  m.sending = true;
  const std::uint64_t ports = m.kind == SendKind::kReadResponse ? std::uint64_t{1} << m.home_port : ports_toward(m.via);
  sending_.push_back({slot, ports});
  if (m.kind == SendKind::kForGpu) queue_pair_enter(slot);
  for (std::uint64_t rest = ports; rest != 0; rest &= rest - 1) ports_[static_cast<std::size_t>(std::countr_zero(rest))]->wake();
}

std::uint32_t Nic::open_receive(MessageId id, HostId src, std::uint32_t sequence, std::uint32_t packets) {
  const std::uint32_t slot = recvs_.allocate();
  RecvState& r = recvs_[slot];
  r.id = id;
  r.src = src;
  r.sequence = sequence;
  r.packets = packets;
  r.active = true;
  return slot;
}

std::uint32_t Nic::open_in_network_receive(MessageId id, HostId src, std::uint32_t sequence, std::uint32_t packets,
                                           bool by_name) {
  const std::uint32_t slot = open_receive(id, src, sequence, packets);
  recvs_[slot].in_network = true;
  if (by_name) named_recvs_.push_back(slot);
  return slot;
}

std::uint16_t Nic::stripe_pattern(std::uint64_t ports) {
  for (std::size_t i = 0; i < stripe_masks_.size(); ++i) {
    if (stripe_masks_[i] == ports) return static_cast<std::uint16_t>(i);
  }
  // Each port's share of the pattern is its share of the bandwidth, in lowest terms
  // (a DGX H100 GPU's 5, 4, 4 and 5 NVLinks to its four NVSwitch chips: 18 entries),
  // scaled down to at most 256 entries where the speeds share no large divisor.
  std::vector<PortIndex> members;
  std::vector<std::int64_t> weights;
  std::int64_t divisor = 0;
  for (std::uint64_t rest = ports; rest != 0; rest &= rest - 1) {
    const auto port = static_cast<PortIndex>(std::countr_zero(rest));
    members.push_back(port);
    weights.push_back(ports_[port]->bandwidth().bits_per_second);
    divisor = std::gcd(divisor, weights.back());
  }
  std::int64_t total = 0;
  for (std::int64_t& w : weights) total += (w /= divisor);
  std::vector<PortIndex> pattern;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::int64_t share = total <= 256 ? weights[i] : std::max<std::int64_t>(1, weights[i] * 256 / total);
    pattern.insert(pattern.end(), static_cast<std::size_t>(share), members[i]);
  }
  stripe_masks_.push_back(ports);
  stripe_patterns_.push_back(std::move(pattern));
  return static_cast<std::uint16_t>(stripe_masks_.size() - 1);
}

PortIndex Nic::stripe_port(const SendState& m, std::uint32_t seq) const {
  const std::vector<PortIndex>& pattern = stripe_patterns_[m.stripe];
  return pattern[(seq + m.stripe_offset) % pattern.size()];
}

void Nic::wake_later(PortIndex port) {
  wake_mask_ |= std::uint64_t{1} << port;
  if (!waker_.scheduled()) sim_->schedule_at(waker_, sim_->now());
}

void Nic::on_waker() {
  if (!fetch_due_.empty()) {
    // Reads an RDMA NIC's ports made room for (issued here, not inside their pull).
    fetch_round_.swap(fetch_due_);  // both keep their capacity: no allocation per round
    for (std::uint32_t slot : fetch_round_) {
      SendState& m = sends_[slot];
      if (!m.active || m.kind != SendKind::kForGpu) continue;
      m.fetch_due = false;
      fetch(slot);
    }
    fetch_round_.clear();
  }
  const std::uint64_t mask = wake_mask_;
  wake_mask_ = 0;
  for (std::uint64_t rest = mask; rest != 0; rest &= rest - 1) ports_[static_cast<std::size_t>(std::countr_zero(rest))]->wake();
}

void Nic::post(MessageId id, const Message& d) {
  assert(d.src == host_);
  const Time now = sim_->now();
  const std::uint64_t ports = ports_toward(d.via);
  if (ports == 0) throw std::logic_error("message posted toward an unreachable host");
  if ((ports & nic_ports_) != 0 && d.in_network == InNetwork::kNone) {
    // In-network transfers (SHARP contributions) pass through the NIC as they are.
    post_to_nic(id, d, static_cast<PortIndex>(std::countr_zero(ports & nic_ports_)));
    return;
  }
  const std::uint32_t slot = sends_.allocate();
  SendState& m = sends_[slot];
  m.id = id;
  m.src = host_;
  m.dst = d.dst;
  m.via = d.via;
  m.sequence = d.sequence;
  m.recv_slot = d.recv_slot;
  m.packets = d.packets;
  m.bytes = d.bytes;
  m.traffic_class = d.traffic_class;
  m.active = true;
  m.last_progress = now;
  if (d.in_network != InNetwork::kNone) {
    // Lossless and unacknowledged: no timer, no congestion control.
    m.in_network = d.in_network;
    m.group = d.group;
    m.stripe = stripe_pattern(ports);
    // NVLink stripes by address: packet n of a piece goes where the piece's address
    // says, the same for every contribution to a sum, so they meet at one switch; and
    // consecutive pieces continue the stripe, so the switches share the buffer exactly.
    m.stripe_offset = d.stripe_base;
    enter_rotation(slot);
    return;
  }
  unfinished_.push_back(slot);
  if (cc_ != nullptr) {
    cc_->start(m.cc, line_rate(ports), config_.network_rtt, now);
    arm_rate_timer();
  }
  arm_retransmit_timer();
  enter_rotation(slot);
}

Packet* Nic::pull(PortIndex port) {
  // The next message, in round-robin order, that may leave through `port` now.
  const std::size_t n = sending_.size();
  if (n == 0) return nullptr;
  if (next_ >= n) next_ = 0;
  const Time now = sim_->now();
  const EgressPort& out = *ports_[port];
  std::size_t pick = n;
  Time earliest_paced = kTimeMax;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = (next_ + i) % n;
    if (((sending_[k].ports >> port) & 1u) == 0) continue;
    const SendState& m = sends_[sending_[k].slot];
    if (m.in_network != InNetwork::kNone && stripe_port(m, m.next_seq) != port) continue;
    if (m.kind == SendKind::kForGpu) {
      if (m.next_seq >= m.fetched) continue;  // its read wakes the port
      // One queue pair per GPU pair and connection: its work requests go in the order posted (a ring
      // channel's steps to its peer), not shared round-robin as separate flows.
      if (!m.queue_pair_head) continue;
    }
    if (out.paused(m.traffic_class)) continue;
    if (out.credit_based() && !out.can_start(m.traffic_class, wire_bytes_of(m, m.next_seq))) {
      // The far end has no room for it yet; its credit update wakes the port.
      ports_[port]->note_credit_wait(m.traffic_class);
      continue;
    }
    if (m.next_send > now) {
      earliest_paced = std::min(earliest_paced, m.next_send);
      continue;
    }
    if (cc_ != nullptr && m.in_network == InNetwork::kNone && m.kind != SendKind::kReadResponse && m.cc.window_bytes != INT64_MAX && m.next_seq > m.acked &&
        static_cast<std::int64_t>(m.next_seq - m.acked) * (config_.mtu + config_.header_bytes) >= m.cc.window_bytes) {
      continue;  // its window is full: an ack wakes the port
    }
    pick = k;
    break;
  }
  if (pick == n) {
    if (earliest_paced != kTimeMax && (!pacer_.scheduled() || pacer_.event_time() > earliest_paced)) {
      sim_->schedule_at(pacer_, earliest_paced);
    }
    return nullptr;
  }
  const std::uint32_t slot = sending_[pick].slot;
  SendState& m = sends_[slot];
  if (m.kind == SendKind::kReadResponse) return pull_read_response(pick);

  Packet* p = sim_->packets().allocate();
  const std::uint32_t payload = wire_bytes_of(m, m.next_seq) - config_.header_bytes;
  p->sent_at = now;
  p->message = slot;
  p->recv_slot = m.recv_slot;
  p->src = m.src;
  p->dst = m.dst;
  p->seq = m.next_seq;
  p->payload = payload;
  p->wire_bytes = payload + config_.header_bytes;
  p->sequence = m.sequence;
  p->src_group = group_of(m.src);
  p->dst_group = group_of(m.dst);
  p->kind = PacketKind::kData;
  p->traffic_class = m.traffic_class;
  p->ecn = config_.ecn_capable ? kEcnCapable : 0;
  p->torus_dim = 0xff;
  p->in_network = m.in_network;
  p->group = m.group;
  ++counters_.data_packets_sent;
  if (m.next_seq < m.sent_max) ++counters_.retransmitted_packets;
  if (cc_ != nullptr && m.in_network == InNetwork::kNone) {
    const double line = line_rate(sending_[pick].ports);
    cc_->on_sent(m.cc, p->wire_bytes, line, now);
    if (m.cc.rate_bps < line) {
      m.next_send = now + static_cast<Time>(static_cast<double>(p->wire_bytes) * 8e12 / m.cc.rate_bps);
    }
  }
  if (m.next_seq + 1 == m.packets && m.sent_max < m.packets && m.kind != SendKind::kForGpu) {
    just_sent_.push_back({m.id, m.in_network != InNetwork::kNone ? slot : UINT32_MAX});
    if (!sent_notifier_.scheduled()) sim_->schedule_at(sent_notifier_, now);
  }
  m.sent_max = std::max(m.sent_max, m.next_seq + 1);
  if (m.kind == SendKind::kForGpu) fetch_later(slot);  // room to read more, perhaps
  if (++m.next_seq == m.packets) {
    // All sent (for now): leave the rotation; keep the order of the others.
    m.sending = false;
    sending_.erase(sending_.begin() + static_cast<std::ptrdiff_t>(pick));
    if (m.kind == SendKind::kForGpu) queue_pair_leave(slot);
    next_ = pick;
  } else {
    next_ = pick + 1;
    if (m.in_network != InNetwork::kNone) {
      // Its next packet may belong to another port, which may be idle.
      const PortIndex next_port = stripe_port(m, m.next_seq);
      if (next_port != port) wake_later(next_port);
    }
  }
  return p;
}

Packet* Nic::control_packet(PacketKind kind, const Packet& about, std::uint32_t seq) {
  Packet* c = sim_->packets().allocate();
  c->sent_at = about.sent_at;  // the sender's RTT sample
  c->message = about.message;
  c->src = about.dst;  // this endpoint, or the GPU an RDMA NIC receives for
  c->dst = about.src;
  c->seq = seq;
  c->wire_bytes = config_.ack_bytes;
  c->sequence = about.sequence;
  c->src_group = about.dst_group;
  c->dst_group = about.src_group;
  c->kind = kind;
  c->traffic_class = config_.ack_traffic_class;
  c->torus_dim = 0xff;
  return c;
}

void Nic::send_control(Packet* c) {
  // Of the ports toward the peer, the one with the least waiting.
  const std::uint64_t ports = ports_toward(c->dst);
  EgressPort* best = nullptr;
  for (std::uint64_t rest = ports; rest != 0; rest &= rest - 1) {
    EgressPort* candidate = ports_[static_cast<std::size_t>(std::countr_zero(rest))];
    if (best == nullptr || candidate->queued_bytes() < best->queued_bytes()) best = candidate;
  }
  best->enqueue(c);
}

// Prefetch stages for an arriving packet (see PacketSink::prefetch_arrival): a data
// packet's receive slot (through the slots' index), the counters' and settings' lines,
// and what its ack's way out reads (with several ports the routes' lines, then the port
// mask; the first port), an answer's send slot.
void Nic::prefetch_arrival(const Packet& p, PortIndex /*in_port*/) const {
  if (p.kind == PacketKind::kData) {
    recvs_.prefetch_index(p.recv_slot);
    __builtin_prefetch(&counters_);
    __builtin_prefetch(&config_);
    if (have_routes_) {  // (the NIC's first line: asked for a stage before)
      __builtin_prefetch(&routes_);
      __builtin_prefetch(&routes_.by_host);
      __builtin_prefetch(&set_mask_);
    }
  } else if (p.kind == PacketKind::kAck && p.message < sends_.size()) {
    __builtin_prefetch(&sends_[p.message]);
  }
}

void Nic::prefetch_arrival_more(const Packet& p, PortIndex /*in_port*/) const {
  if (p.kind == PacketKind::kData) {
    recvs_.prefetch(p.recv_slot);
    if (have_routes_) __builtin_prefetch(set_mask_.data());
    if (!ports_.empty()) __builtin_prefetch(ports_[0]);
  } else if (p.kind == PacketKind::kAck && p.message < sends_.size()) {
    const char* s = reinterpret_cast<const char*>(&sends_[p.message]);
    __builtin_prefetch(s + 64);
    if (cc_ != nullptr) __builtin_prefetch(s + 128);
  }
}

void Nic::prefetch_pull(PortIndex /*port*/) const {
  __builtin_prefetch(&counters_);
  __builtin_prefetch(&config_);
  if (sending_.empty()) return;
  const std::size_t k = next_ < sending_.size() ? next_ : 0;
  __builtin_prefetch(&sending_[k]);
  const std::uint32_t slot = sending_[k].slot;
  if (slot >= sends_.size()) return;
  const char* m = reinterpret_cast<const char*>(&sends_[slot]);
  // The congestion control's state only where there is one (it is last).
  const std::size_t end = cc_ != nullptr ? sizeof(SendState) : offsetof(SendState, cc);
  for (std::size_t b = 0; b < end; b += 64) __builtin_prefetch(m + b);
}

void Nic::receive(Packet* p, PortIndex in_port) {
  // Link-level frames first: they belong to the port, not to a message.
  if (p->kind == PacketKind::kCredit || p->kind == PacketKind::kPause) {
    if (p->kind == PacketKind::kCredit) {
      ports_[in_port]->credits_returned(p->traffic_class, p->payload);
    } else {
      ports_[in_port]->set_paused(p->traffic_class, p->payload != 0);
    }
    sim_->packets().release(p);
    return;
  }
  if (rdma_nic_ && p->kind == PacketKind::kData && p->in_network != InNetwork::kNone) {
    relay(p, in_port);
    return;
  }
  if ((credit_ports_ >> in_port) & 1u) {
    // An endpoint takes what arrives at once (into memory): its buffer is free again.
    ports_[in_port]->owe_credits(p->traffic_class, p->wire_bytes);
  }
  switch (p->kind) {
    case PacketKind::kWorkRequest: on_work_request(p, in_port); return;
    case PacketKind::kReadRequest: on_read_request(p, in_port); return;
    case PacketKind::kDmaWrite: on_dma_write(p); return;
    case PacketKind::kCompletion: on_completion(p); return;
    default: break;
  }
  if (p->kind == PacketKind::kData && p->in_network != InNetwork::kNone) {
    on_in_network_data(p);
    return;
  }
  if (p->kind == PacketKind::kData) {
    // kNoSlot: a late copy from another process's sender, whose receive here is over.
    const RecvState* r = p->recv_slot == kNoSlot ? nullptr : &recvs_[p->recv_slot];
    if (r == nullptr || !r->active || r->src != p->src || r->sequence != p->sequence) {
      // A late copy of a message received whole, whose slot was let go (receive slots
      // open before a message's first packet, so nothing else leaves it unmatched):
      // say again that all of it is here, in case the last ack was lost.
      ++counters_.duplicate_packets_received;
      send_full_ack(*p);
      sim_->packets().release(p);
      return;
    }
  } else {
    const SendState& m = sends_[p->message];
    if (!m.active || m.sequence != p->sequence) {
      // An answer about a message that has finished (its slot may hold another): drop it.
      sim_->packets().release(p);
      return;
    }
  }
  switch (p->kind) {
    case PacketKind::kData: on_data(p); break;
    case PacketKind::kAck: on_ack(p); break;
    case PacketKind::kNack: on_nack(p); break;
    case PacketKind::kCnp: on_cnp(p); break;
    case PacketKind::kReadResponse: on_read_response(p); break;
    case PacketKind::kPause:
    case PacketKind::kCredit:
    case PacketKind::kWorkRequest:
    case PacketKind::kReadRequest:
    case PacketKind::kDmaWrite:
    case PacketKind::kCompletion: break;  // handled above
  }
}

void Nic::send_full_ack(const Packet& late) {
  ++counters_.acks_sent;
  send_control(control_packet(PacketKind::kAck, late, kAllPackets));
}

void Nic::on_data(Packet* p) {
  const std::uint32_t slot = p->recv_slot;
  bool just_delivered = false;
  RecvState& m = recvs_[slot];
  const MessageId id = m.id;
  const Time now = sim_->now();
  const std::uint32_t s = p->seq;
  if (p->ecn == kEcnCongested && cnp_interval_ > 0 && (m.last_cnp < 0 || now - m.last_cnp >= cnp_interval_)) {
    m.last_cnp = now;
    ++counters_.cnps_sent;
    send_control(control_packet(PacketKind::kCnp, *p, s));
  }
  bool ack_now = false;
  bool fresh = false;
  if (s < m.expected || bit(m.out_of_order, s)) {
    ++counters_.duplicate_packets_received;
    ack_now = true;  // tell the sender where we are
  } else {
    fresh = true;
    ++m.received;
    ++m.unacked;
    ++counters_.data_packets_received;
    counters_.payload_bytes_received += p->payload;
    if (s == m.expected) {
      ++m.expected;
      while (bit(m.out_of_order, m.expected)) ++m.expected;
      ack_now = m.unacked >= config_.ack_interval || m.expected == m.packets;
    } else {
      // Ahead of the in-order point: keep it, and say where the gap is if the path
      // cannot reorder.
      if (m.out_of_order.empty()) m.out_of_order.assign((m.packets + 63) / 64, 0);
      m.out_of_order[s / 64] |= std::uint64_t{1} << (s % 64);
      if (config_.nack_on_gap && (m.last_nack_seq != m.expected || now - m.last_nack >= config_.nack_interval)) {
        m.last_nack_seq = m.expected;
        m.last_nack = now;
        ++counters_.nacks_sent;
        send_control(control_packet(PacketKind::kNack, *p, m.expected));
      }
    }
    if (m.received == m.packets) just_delivered = true;
  }
  if (ack_now) {
    m.unacked = 0;
    ++counters_.acks_sent;
    Packet* ack = control_packet(PacketKind::kAck, *p, m.expected);
    if (telemetry_) sim_->packets().telemetry(ack) = sim_->packets().telemetry(p);  // echo the path's INT
    send_control(ack);
  }
  PortIndex gpu_port = 0;
  const std::uint8_t traffic_class = p->traffic_class;
  if (rdma_nic_) {
    // Into the GPU's memory, over PCIe: each packet once, in the order it came.
    gpu_port = static_cast<PortIndex>(std::countr_zero(ports_toward(p->dst)));
    if (fresh) {
      p->kind = PacketKind::kDmaWrite;
      p->message = id;
      p->ingress_port = 0;  // made here (not relayed)
      p->wire_bytes = p->payload + config_.header_bytes;
      p->ecn = 0;
      ++counters_.dma_writes;
      ports_[gpu_port]->enqueue(p);
      p = nullptr;
    }
  }
  if (p != nullptr) sim_->packets().release(p);
  if (just_delivered) {
    // All here: the receive slot is let go (a late copy is answered without it), and
    // last, the owner told (it may open new receives here). An RDMA NIC's GPU hears it
    // from a completion behind the message's last write.
    recvs_.release(slot, /*clear=*/true);
    if (rdma_nic_) {
      complete(id, CompletionKind::kDelivered, gpu_port, traffic_class);
    } else if (observer_ != nullptr) {
      observer_->on_message_delivered(id, now);
    }
  }
}

void Nic::on_in_network_data(Packet* p) {
  // Lossless and unacknowledged: count it, deliver on the last.
  std::uint32_t slot = p->recv_slot;
  if (p->in_network == InNetwork::kReplica) {
    // A multicast copy names the message, not this member's slot (the switch made it).
    slot = UINT32_MAX;
    for (std::uint32_t s : named_recvs_) {
      const RecvState& r = recvs_[s];
      if (r.src == p->src && r.sequence == p->sequence) {
        slot = s;
        break;
      }
    }
  }
  if (slot == UINT32_MAX || !recvs_[slot].active || !recvs_[slot].in_network) {
    ++counters_.duplicate_packets_received;  // a sum or copy for nobody: a model error
    sim_->packets().release(p);
    return;
  }
  RecvState& r = recvs_[slot];
  ++r.received;
  ++counters_.data_packets_received;
  counters_.payload_bytes_received += p->payload;
  const bool by_name = p->in_network == InNetwork::kReplica;
  sim_->packets().release(p);
  if (r.received < r.packets) return;
  const MessageId id = r.id;
  if (by_name) std::erase(named_recvs_, slot);
  recvs_.release(slot, /*clear=*/true);
  if (observer_ != nullptr) observer_->on_message_delivered(id, sim_->now());
}

void Nic::on_ack(Packet* p) {
  const std::uint32_t slot = p->message;
  SendState& m = sends_[slot];
  const std::uint32_t upto = std::min(p->seq, m.packets);
  if (cc_ != nullptr) {
    const AckFeedback feedback{upto, m.next_seq, sim_->now() - p->sent_at, telemetry_ ? &sim_->packets().telemetry(p) : nullptr};
    cc_->on_ack(m.cc, feedback, line_rate(ports_toward(m.dst)), sim_->now());
  }
  sim_->packets().release(p);
  if (upto <= m.acked) return;
  m.acked = upto;
  m.last_progress = sim_->now();
  if (cc_ != nullptr && m.sending && m.cc.window_bytes != INT64_MAX) {
    // The window may have room again.
    for (std::uint64_t rest = ports_toward(m.dst); rest != 0; rest &= rest - 1) ports_[static_cast<std::size_t>(std::countr_zero(rest))]->wake();
  }
  if (m.next_seq < m.acked) m.next_seq = m.acked;
  if (m.kind == SendKind::kForGpu && m.fetched < m.next_seq) {
    // Acknowledged past what a rewind had read again: those reads are not needed.
    m.fetched = m.next_seq;
    m.fetch_next = std::max(m.fetch_next, m.fetched);
    fetch(slot);
  }
  if (m.sending && m.next_seq == m.packets) {
    // A rewind was overtaken by acknowledgements: nothing left to resend.
    m.sending = false;
    const auto it = std::find_if(sending_.begin(), sending_.end(), [&](const Sending& e) { return e.slot == slot; });
    const auto k = static_cast<std::size_t>(it - sending_.begin());
    sending_.erase(it);
    if (next_ > k) --next_;
    if (m.kind == SendKind::kForGpu) queue_pair_leave(slot);
  }
  if (m.acked == m.packets) {
    const MessageId id = m.id;
    const bool for_gpu = m.kind == SendKind::kForGpu;
    const PortIndex gpu_port = m.home_port;
    const std::uint8_t traffic_class = m.traffic_class;
    sends_.release(slot);
    if (!for_gpu) ++counters_.messages_finished;
    std::erase(unfinished_, slot);
    if (unfinished_.empty()) {
      // Nothing outstanding: no timer should outlive the traffic (it would stretch the run).
      sim_->cancel(retransmit_timer_);
      sim_->cancel(rate_timer_);
      sim_->cancel(pacer_);
    }
    if (for_gpu) {
      complete(id, CompletionKind::kFinished, gpu_port, traffic_class);
    } else if (observer_ != nullptr) {
      observer_->on_message_finished(id, sim_->now());
    }
  }
}

void Nic::on_nack(Packet* p) {
  const std::uint32_t slot = p->message;
  SendState& m = sends_[slot];
  const std::uint32_t from = p->seq;
  ++counters_.nacks_received;
  sim_->packets().release(p);
  if (from < m.acked) return;
  // Everything before the gap arrived; go back to it.
  m.acked = from;
  m.last_progress = sim_->now();
  m.next_seq = from;
  if (m.kind == SendKind::kForGpu) rewound(m, slot);
  enter_rotation(slot);
}

void Nic::on_cnp(Packet* p) {
  SendState& m = sends_[p->message];
  ++counters_.cnps_received;
  sim_->packets().release(p);
  if (cc_ == nullptr) return;
  cc_->on_cnp(m.cc, sim_->now());
}

void Nic::arm_retransmit_timer() {
  if (!retransmit_timer_.scheduled() && !unfinished_.empty()) {
    sim_->schedule_in(retransmit_timer_, config_.retransmit_timeout);
  }
}

Time Nic::timeout_of(const SendState& m) const {
  // Exponential backoff that progress does not undo: a timer shorter than the path's
  // round trip, or than a packet's serialization, doubles until it is not, so it costs a
  // few resends instead of resending forever (a run could otherwise never finish).
  const int shift = std::min<int>(m.timeouts, kMaxBackoff);
  const Time limit = kTimeMax / 4;  // far beyond any run, and safe to add `now` to
  return config_.retransmit_timeout > (limit >> shift) ? limit : config_.retransmit_timeout << shift;
}

void Nic::on_retransmit_timer() {
  const Time now = sim_->now();
  Time next = kTimeMax;
  for (std::uint32_t slot : unfinished_) {
    SendState& m = sends_[slot];
    if (now - m.last_progress >= timeout_of(m) && m.next_seq > m.acked) {
      // Nothing acknowledged for a whole timeout with packets outstanding: resend them.
      ++counters_.timeouts;
      if (m.timeouts < kMaxBackoff) ++m.timeouts;
      m.next_seq = m.acked;
      m.last_progress = now;
      if (m.kind == SendKind::kForGpu) rewound(m, slot);
      enter_rotation(slot);
    } else if (m.next_seq <= m.acked) {
      // Nothing outstanding (waiting its turn, its read, its window or a pause): nothing
      // can time out, so its clock starts over. Else the timer would come back every
      // picosecond, and time the first packet out the moment it left.
      m.last_progress = now;
    }
    next = std::min(next, m.last_progress + timeout_of(m));
  }
  if (next != kTimeMax) sim_->schedule_at(retransmit_timer_, std::max(next, now + 1));
}

void Nic::arm_rate_timer() {
  if (cc_ == nullptr) return;
  Time next = kTimeMax;
  for (std::uint32_t slot : unfinished_) next = std::min(next, cc_->next_timer(sends_[slot].cc));
  if (next == kTimeMax) return;
  if (!rate_timer_.scheduled() || rate_timer_.event_time() > next) sim_->schedule_at(rate_timer_, std::max(next, sim_->now()));
}

void Nic::on_rate_timer() {
  const Time now = sim_->now();
  for (std::uint32_t slot : unfinished_) {
    SendState& m = sends_[slot];
    if (cc_->next_timer(m.cc) <= now) cc_->on_timer(m.cc, line_rate(ports_toward(m.dst)), now);
  }
  arm_rate_timer();
  wake_ports();  // a faster rate may let a paced flow go now
}

void Nic::on_pacer() { wake_ports(); }

void Nic::on_sent_notifier() {
  std::vector<JustSent> sent;
  sent.swap(just_sent_);
  for (const JustSent& s : sent) {
    if (observer_ != nullptr) observer_->on_message_sent(s.id, sim_->now());
    if (s.slot == UINT32_MAX) continue;
    // In-network: nothing will answer it, so having left is being done.
    sends_.release(s.slot);
    ++counters_.messages_finished;
    if (observer_ != nullptr) observer_->on_message_finished(s.id, sim_->now());
  }
}

// ---- RDMA NIC and the GPUs behind it ----

void Nic::post_to_nic(MessageId id, const Message& d, PortIndex port) {
  // The work request (WQE) names everything the NIC's queue pair needs; the payload
  // stays in the GPU's memory until the NIC reads it.
  Packet* w = sim_->packets().allocate();
  w->sent_at = d.bytes;
  w->message = id;
  w->src = host_;
  w->dst = d.dst;
  w->seq = d.packets;
  w->payload = 0;
  w->wire_bytes = config_.ack_bytes;
  w->recv_slot = d.recv_slot;
  w->sequence = d.sequence;
  w->src_group = group_of(host_);
  w->dst_group = group_of(d.dst);
  w->kind = PacketKind::kWorkRequest;
  w->traffic_class = d.traffic_class;
  w->torus_dim = 0xff;
  w->group = d.connection;  // which of the GPU pair's queue pairs
  ports_[port]->enqueue(w);
  // Posted is sent, for the GPU's program: as NCCL's kernel leaves its data in its FIFO
  // for the proxy's RDMA write and goes on (its owner is told from an event of its own).
  just_sent_.push_back({id, UINT32_MAX});
  if (!sent_notifier_.scheduled()) sim_->schedule_at(sent_notifier_, sim_->now());
}

void Nic::on_work_request(Packet* p, PortIndex in_port) {
  const Time now = sim_->now();
  const std::uint32_t slot = sends_.allocate();
  SendState& m = sends_[slot];
  m.id = p->message;
  m.src = p->src;
  m.dst = p->dst;
  m.via = p->dst;
  m.sequence = p->sequence;
  m.recv_slot = p->recv_slot;
  m.packets = p->seq;
  m.bytes = p->sent_at;
  m.traffic_class = p->traffic_class;
  m.kind = SendKind::kForGpu;
  m.home_port = in_port;
  m.queue_pair = queue_pair_of(m.src, m.dst, p->group);
  m.active = true;
  m.last_progress = now;
  sim_->packets().release(p);
  ++counters_.work_requests;
  unfinished_.push_back(slot);
  if (cc_ != nullptr) {
    cc_->start(m.cc, line_rate(ports_toward(m.dst)), config_.network_rtt, now);
    arm_rate_timer();
  }
  arm_retransmit_timer();
  fetch(slot);
  enter_rotation(slot);  // its ports find nothing to send until the first read is in
}

void Nic::fetch(std::uint32_t slot) {
  SendState& m = sends_[slot];
  m.fetch_next = std::max(m.fetch_next, m.fetched);
  const std::uint32_t limit = fetch_limit(slot, m.next_seq);
  if (m.fetch_next >= limit) return;
  // One read per batch of the window (a whole batch, or what is left of the message).
  if (limit - m.fetch_next < fetch_batch_packets_ && limit < m.packets) return;
  const std::int64_t from = static_cast<std::int64_t>(m.fetch_next) * config_.mtu;
  const std::int64_t to = std::min<std::int64_t>(m.bytes, static_cast<std::int64_t>(limit) * config_.mtu);
  Packet* r = sim_->packets().allocate();
  r->sent_at = std::max<std::int64_t>(0, to - from);
  r->message = slot;
  r->src = m.src;
  r->dst = m.src;
  r->seq = m.fetch_next;
  r->payload = limit - m.fetch_next;
  r->wire_bytes = config_.ack_bytes;
  r->sequence = m.sequence;
  r->kind = PacketKind::kReadRequest;
  r->traffic_class = m.traffic_class;
  r->torus_dim = 0xff;
  m.fetch_next = limit;
  ++counters_.read_requests;
  ports_[m.home_port]->enqueue(r);
}

std::uint32_t Nic::queue_pair_of(HostId src, HostId dst, std::uint16_t connection) {
  // The GPU behind this NIC, its peer and the connection (host numbers below 2^24).
  const std::uint64_t key = (std::uint64_t{src & 0xffffffu} << 40) | (std::uint64_t{dst & 0xffffffu} << 16) | connection;
  const auto [it, made] = queue_pair_index_.try_emplace(key, static_cast<std::uint32_t>(queue_pairs_.size()));
  if (made) queue_pairs_.emplace_back();
  return it->second;
}

void Nic::queue_pair_enter(std::uint32_t slot) {
  // Posted later is the larger sequence (the GPU numbers its messages in order); one that
  // went back and enters again goes before those posted after it.
  std::vector<std::uint32_t>& q = queue_pairs_[sends_[slot].queue_pair].in_rotation;
  const std::uint32_t sequence = sends_[slot].sequence;
  auto at = q.end();
  while (at != q.begin() && sends_[*(at - 1)].sequence > sequence) --at;
  const bool first = at == q.begin();
  if (first && !q.empty()) sends_[q.front()].queue_pair_head = false;
  q.insert(at, slot);
  sends_[slot].queue_pair_head = first;
}

void Nic::queue_pair_leave(std::uint32_t slot) {
  std::vector<std::uint32_t>& q = queue_pairs_[sends_[slot].queue_pair].in_rotation;
  q.erase(std::find(q.begin(), q.end(), slot));  // mostly the first
  sends_[slot].queue_pair_head = false;
  if (!q.empty()) sends_[q.front()].queue_pair_head = true;
}

std::uint32_t Nic::fetch_limit(std::uint32_t slot, std::uint32_t next_seq) const {
  // The read-ahead window belongs to the queue pair: a work request queued behind others
  // reads once they have asked for all of theirs, into the room their unsent packets leave
  // (else the GPU would share PCIe between the head's reads and reads not yet needed).
  const SendState& m = sends_[slot];
  std::uint32_t window = fetch_window_packets_;
  for (const std::uint32_t earlier : queue_pairs_[m.queue_pair].in_rotation) {
    const SendState& o = sends_[earlier];
    if (o.sequence >= m.sequence) break;  // in sequence order: the rest came later
    const std::uint32_t asked = std::max(o.fetch_next, o.fetched);
    if (asked < o.packets) return next_seq;
    const std::uint32_t held = asked - o.next_seq;
    window = held >= window ? 0 : window - held;
  }
  return std::min(m.packets, next_seq + window);
}

void Nic::fetch_later(std::uint32_t slot) {
  // Called as packet next_seq leaves: once it has, is there a whole read's room?
  SendState& m = sends_[slot];
  if (std::max(m.fetch_next, m.fetched) >= m.packets) {
    // All asked for: the queue pair's next work request may read into the room this
    // packet leaves (checked by fetch() once it has left).
    const std::vector<std::uint32_t>& q = queue_pairs_[m.queue_pair].in_rotation;
    const auto at = std::find(q.begin(), q.end(), slot);
    if (at != q.end() && at + 1 != q.end()) due_for_fetch(*(at + 1));
    return;
  }
  if (m.fetch_due) return;
  const std::uint32_t limit = fetch_limit(slot, m.next_seq + 1);
  const std::uint32_t next = std::max(m.fetch_next, m.fetched);
  if (next >= limit || (limit - next < fetch_batch_packets_ && limit < m.packets)) return;
  due_for_fetch(slot);
}

void Nic::due_for_fetch(std::uint32_t slot) {
  SendState& m = sends_[slot];
  if (m.fetch_due) return;
  m.fetch_due = true;
  fetch_due_.push_back(slot);
  if (!waker_.scheduled()) sim_->schedule_at(waker_, sim_->now());
}

void Nic::rewound(SendState& m, std::uint32_t slot) {
  // Go-back-N: what was sent after `next_seq` is read again (the NIC keeps no copy);
  // reads still on their way are dropped as they come, unless they are the next needed.
  m.fetched = m.next_seq;
  m.fetch_next = m.next_seq;
  fetch(slot);
}

void Nic::on_read_request(Packet* p, PortIndex in_port) {
  // The GPU's memory answers with the payload, packet by packet, as PCIe credits allow,
  // in the order the NIC asked: a read that continues one still being answered extends
  // it, and one that starts elsewhere (the NIC went back) replaces it.
  for (const Sending& e : sending_) {
    SendState& r = sends_[e.slot];
    if (r.kind != SendKind::kReadResponse || r.home_port != in_port || r.recv_slot != p->message || r.sequence != p->sequence) continue;
    if (r.first_seq + r.packets == p->seq) {
      r.packets += std::max<std::uint32_t>(1, p->payload);
      r.bytes += p->sent_at;
    } else {
      r.first_seq = p->seq;
      r.next_seq = 0;
      r.packets = std::max<std::uint32_t>(1, p->payload);
      r.bytes = p->sent_at;
    }
    sim_->packets().release(p);
    return;
  }
  const std::uint32_t slot = sends_.allocate();
  SendState& m = sends_[slot];
  m.src = host_;
  m.dst = p->src;
  m.via = p->src;
  m.sequence = p->sequence;
  m.recv_slot = p->message;  // the NIC's send slot, named in every response
  m.packets = std::max<std::uint32_t>(1, p->payload);
  m.bytes = p->sent_at;
  m.traffic_class = p->traffic_class;
  m.kind = SendKind::kReadResponse;
  m.home_port = in_port;
  m.first_seq = p->seq;
  m.active = true;
  sim_->packets().release(p);
  enter_rotation(slot);
}

Packet* Nic::pull_read_response(std::size_t pick) {
  const std::uint32_t slot = sending_[pick].slot;
  SendState& m = sends_[slot];
  Packet* p = sim_->packets().allocate();
  const std::uint32_t payload = wire_bytes_of(m, m.next_seq) - config_.header_bytes;
  p->sent_at = sim_->now();
  p->message = m.recv_slot;
  p->src = host_;
  p->dst = m.dst;
  p->seq = m.first_seq + m.next_seq;
  p->payload = payload;
  p->wire_bytes = payload + config_.header_bytes;
  p->sequence = m.sequence;
  p->kind = PacketKind::kReadResponse;
  p->traffic_class = m.traffic_class;
  p->torus_dim = 0xff;
  if (++m.next_seq == m.packets) {
    sending_.erase(sending_.begin() + static_cast<std::ptrdiff_t>(pick));
    next_ = pick;
    sends_.release(slot);
  } else {
    next_ = pick + 1;
  }
  return p;
}

void Nic::on_read_response(Packet* p) {
  const std::uint32_t slot = p->message;
  SendState& m = sends_[slot];
  const std::uint32_t seq = p->seq;
  sim_->packets().release(p);
  if (m.kind != SendKind::kForGpu || seq != m.fetched) {
    ++counters_.stale_read_packets;  // read before a rewind, or already acknowledged
    return;
  }
  ++counters_.read_packets;
  const bool was_waiting = m.next_seq == m.fetched;
  ++m.fetched;
  m.fetch_next = std::max(m.fetch_next, m.fetched);
  if (was_waiting && m.sending) {
    for (std::uint64_t rest = ports_toward(m.dst); rest != 0; rest &= rest - 1) {
      ports_[static_cast<std::size_t>(std::countr_zero(rest))]->wake();
    }
  }
}

void Nic::complete(MessageId id, CompletionKind kind, PortIndex port, std::uint8_t traffic_class) {
  Packet* c = sim_->packets().allocate();
  c->sent_at = sim_->now();
  c->message = id;
  c->src = host_;
  c->dst = host_;
  c->seq = static_cast<std::uint32_t>(kind);
  c->wire_bytes = config_.ack_bytes;
  c->kind = PacketKind::kCompletion;
  c->traffic_class = traffic_class;
  c->torus_dim = 0xff;
  ++counters_.completions;
  ports_[port]->enqueue(c);
}

void Nic::on_dma_write(Packet* p) {
  // Counted by the NIC that received it (the transport endpoint); memory just takes it.
  sim_->packets().release(p);
}

void Nic::on_completion(Packet* p) {
  const MessageId id = p->message;
  const auto kind = static_cast<CompletionKind>(p->seq);
  sim_->packets().release(p);
  if (observer_ == nullptr) return;
  const Time now = sim_->now();
  switch (kind) {
    case CompletionKind::kFinished:
      ++counters_.messages_finished;  // the message's owner counts it, as for its own sends
      observer_->on_message_finished(id, now);
      break;
    case CompletionKind::kDelivered: observer_->on_message_delivered(id, now); break;
  }
}

void Nic::relay(Packet* p, PortIndex in_port) {
  // SHARP's in-network traffic is not the queue pairs' (sim/endpoint/nic.h): the NIC passes it
  // between its GPU and the wire as the relay it was, its buffer held until it leaves.
  p->ingress_port = static_cast<std::uint16_t>(kRelayedMark | in_port);
  p->ingress_class = p->traffic_class;
  const std::uint64_t ports = ports_toward(p->dst);
  if (ports == 0) throw std::logic_error("an in-network packet an RDMA NIC has no route for");
  std::uint64_t rest = ports;
  for (int k = static_cast<int>(flow_hash(*p) % static_cast<std::uint32_t>(std::popcount(ports))); k > 0; --k) rest &= rest - 1;
  ports_[static_cast<std::size_t>(std::countr_zero(rest))]->enqueue(p, /*granted=*/true);
}

void Nic::on_departure(const Departure& d) {
  if ((d.ingress_port & kMarkBits) != kRelayedMark) return;
  const auto in = static_cast<PortIndex>(d.ingress_port & ~kMarkBits);
  if ((credit_ports_ >> in) & 1u) ports_[in]->owe_credits(d.ingress_class, d.wire_bytes);
}

}  // namespace fabricsim
