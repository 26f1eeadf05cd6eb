#include "sim/endpoint/nic.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstddef>
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
    : sim_(&sim),
      host_(host),
      observer_(observer),
      cc_(config.congestion_control.get()),
      config_(config),
      rdma_(*this, config_),
      in_network_(*this) {
  if (cc_ != nullptr) {
    cnp_interval_ = cc_->cnp_interval();
    telemetry_ = cc_->wants_telemetry();
    if (telemetry_) sim.packets().enable_telemetry();
  }
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

void Nic::wake_ports_toward(HostId dst) {
  for (std::uint64_t rest = ports_toward(dst); rest != 0; rest &= rest - 1) ports_[static_cast<std::size_t>(std::countr_zero(rest))]->wake();
}

void Nic::enter_rotation(std::uint32_t slot) {
  SendState& m = sends_[slot];
  if (m.sending) return;
  m.sending = true;
  const std::uint64_t ports = m.kind == SendKind::kReadResponse ? std::uint64_t{1} << m.home_port : ports_toward(m.via);
  sending_.push_back({slot, m.traffic_class, m.kind == SendKind::kMessage && m.in_network == InNetwork::kNone, ports, m.next_send});
  if (m.kind == SendKind::kForGpu) rdma_.queue_pair_enter(slot);
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
  if (by_name) in_network_.note_named_receive(slot);
  return slot;
}

void Nic::wake_later(PortIndex port) {
  wake_mask_ |= std::uint64_t{1} << port;
  wake_soon();
}

void Nic::wake_soon() {
  if (!waker_.scheduled()) sim_->schedule_at(waker_, sim_->now());
}

void Nic::on_waker() {
  if (rdma_.fetches_due()) rdma_.run_due_fetches();  // reads an RDMA NIC's ports made room for
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
    rdma_.post(id, d, static_cast<PortIndex>(std::countr_zero(ports & nic_ports_)));
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
  m.cap_bps = d.rate_cap_bps;
  m.active = true;
  m.last_progress = now;
  if (d.in_network != InNetwork::kNone) {
    // Lossless and unacknowledged: no timer, no congestion control.
    m.in_network = d.in_network;
    m.group = d.group;
    m.stripe = striping_.pattern_for(ports, ports_);
    // NVLink stripes by address: packet n of a piece goes where the piece's address
    // says, the same for every contribution to a sum, so they meet at one switch; and
    // consecutive pieces continue the stripe, so the switches share the buffer exactly.
    m.stripe_offset = d.stripe_base;
    enter_rotation(slot);
    return;
  }
  if (m.cap_bps > 0) {
    // The sender makes each packet before it can leave: the first one too.
    m.next_send = now + static_cast<Time>(static_cast<double>(factory().wire_bytes_of(m, 0)) * 8e12 / m.cap_bps);
  }
  start_reliable(slot, ports);
  enter_rotation(slot);
}

void Nic::start_reliable(std::uint32_t slot, std::uint64_t ports) {
  unfinished_.push_back(slot);
  if (cc_ != nullptr) {
    cc_->start(sends_[slot].cc, line_rate(ports), config_.network_rtt, sim_->now());
    arm_rate_timer();
  }
  arm_retransmit_timer();
}

void Nic::note_sent(MessageId id, std::uint32_t slot) {
  just_sent_.push_back({id, slot});
  if (!sent_notifier_.scheduled()) sim_->schedule_at(sent_notifier_, sim_->now());
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
  // A full packet's wire bytes: a paced message of its own that the port could start is
  // passed over from its entry alone, as the checks below would pass it.
  const std::int64_t full_packet = static_cast<std::int64_t>(config_.mtu) + config_.header_bytes;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = (next_ + i) % n;
    const Sending& e = sending_[k];
    if (((e.ports >> port) & 1u) == 0) continue;
    if (e.own_message && e.next_send > now && out.can_start(e.traffic_class, full_packet)) {
      earliest_paced = std::min(earliest_paced, e.next_send);
      continue;
    }
    const SendState& m = sends_[e.slot];
    if (m.in_network != InNetwork::kNone && striping_.port_for(m.stripe, m.stripe_offset, m.next_seq) != port) continue;
    if (m.kind == SendKind::kForGpu) {
      if (m.next_seq >= m.fetched) continue;  // its read wakes the port
      // One queue pair per GPU pair and connection: its work requests go in the order posted (a ring
      // channel's steps to its peer), not shared round-robin as separate flows.
      if (!m.queue_pair_head) continue;
    }
    if (out.paused(m.traffic_class)) continue;
    if (out.credit_based() && !out.can_start(m.traffic_class, factory().wire_bytes_of(m, m.next_seq))) {
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
    if (earliest_paced != kTimeMax) {
      paced_ports_ |= std::uint64_t{1} << port;
      if (!pacer_.scheduled() || pacer_.event_time() > earliest_paced) sim_->schedule_at(pacer_, earliest_paced);
    }
    return nullptr;
  }
  const std::uint32_t slot = sending_[pick].slot;
  SendState& m = sends_[slot];
  if (m.kind == SendKind::kReadResponse) return rdma_.pull_read_response(pick);

  Packet* p = factory().data(m, slot, group_of(m.src), group_of(m.dst), now);
  ++counters_.data_packets_sent;
  if (m.next_seq < m.sent_max) ++counters_.retransmitted_packets;
  if (cc_ != nullptr && m.in_network == InNetwork::kNone) {
    const double line = line_rate(sending_[pick].ports);
    cc_->on_sent(m.cc, p->wire_bytes, line, now);
    if (m.cc.rate_bps < line) {
      m.next_send = now + static_cast<Time>(static_cast<double>(p->wire_bytes) * 8e12 / m.cc.rate_bps);
    }
  }
  if (m.cap_bps > 0 && m.next_seq + 1 < m.packets) {
    // The next packet is made while this one leaves.
    const double next = static_cast<double>(factory().wire_bytes_of(m, m.next_seq + 1));
    m.next_send = std::max(m.next_send, std::max(now, m.next_send) + static_cast<Time>(next * 8e12 / m.cap_bps));
  }
  sending_[pick].next_send = m.next_send;
  if (m.next_seq + 1 == m.packets && m.sent_max < m.packets && m.kind != SendKind::kForGpu) {
    note_sent(m.id, m.in_network != InNetwork::kNone ? slot : UINT32_MAX);
  }
  m.sent_max = std::max(m.sent_max, m.next_seq + 1);
  if (m.kind == SendKind::kForGpu) rdma_.fetch_later(slot);  // room to read more, perhaps
  if (++m.next_seq == m.packets) {
    // All sent (for now): leave the rotation; keep the order of the others.
    m.sending = false;
    sending_.erase(sending_.begin() + static_cast<std::ptrdiff_t>(pick));
    if (m.kind == SendKind::kForGpu) rdma_.queue_pair_leave(slot);
    next_ = pick;
  } else {
    next_ = pick + 1;
    if (m.in_network != InNetwork::kNone) {
      // Its next packet may belong to another port, which may be idle.
      const PortIndex next_port = striping_.port_for(m.stripe, m.stripe_offset, m.next_seq);
      if (next_port != port) wake_later(next_port);
    }
  }
  return p;
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
    in_network_.relay(p, in_port);
    return;
  }
  if (credit_port(in_port)) {
    // An endpoint takes what arrives at once (into memory): its buffer is free again.
    ports_[in_port]->owe_credits(p->traffic_class, p->wire_bytes);
  }
  switch (p->kind) {
    case PacketKind::kWorkRequest: rdma_.on_work_request(p, in_port); return;
    case PacketKind::kReadRequest: rdma_.on_read_request(p, in_port); return;
    case PacketKind::kDmaWrite:
      // Counted by the NIC that received it (the transport endpoint); memory just takes it.
      sim_->packets().release(p);
      return;
    case PacketKind::kCompletion: rdma_.on_completion(p); return;
    default: break;
  }
  if (p->kind == PacketKind::kData && p->in_network != InNetwork::kNone) {
    in_network_.on_data(p);
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
    case PacketKind::kReadResponse: rdma_.on_read_response(p); break;
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
  send_control(factory().control(PacketKind::kAck, late, kAllPackets));
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
    send_control(factory().control(PacketKind::kCnp, *p, s));
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
        send_control(factory().control(PacketKind::kNack, *p, m.expected));
      }
    }
    if (m.received == m.packets) just_delivered = true;
  }
  if (ack_now) {
    m.unacked = 0;
    ++counters_.acks_sent;
    Packet* ack = factory().control(PacketKind::kAck, *p, m.expected);
    if (telemetry_) sim_->packets().telemetry(ack) = sim_->packets().telemetry(p);  // echo the path's INT
    send_control(ack);
  }
  PortIndex gpu_port = 0;
  const std::uint8_t traffic_class = p->traffic_class;
  if (rdma_nic_) {
    gpu_port = static_cast<PortIndex>(std::countr_zero(ports_toward(p->dst)));
    if (fresh) {
      rdma_.write_to_gpu(p, id, gpu_port);
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
      rdma_.complete(id, CompletionKind::kDelivered, gpu_port, traffic_class);
    } else if (observer_ != nullptr) {
      observer_->on_message_delivered(id, now);
    }
  }
}

void Nic::on_ack(Packet* p) {
  const std::uint32_t slot = p->message;
  SendState& m = sends_[slot];
  const std::uint32_t upto = std::min(p->seq, m.packets);
  if (cc_ != nullptr) {
    const AckFeedback feedback{upto, m.next_seq, sim_->now() - p->sent_at, telemetry_ ? &sim_->packets().telemetry(p) : nullptr};
    cc_->on_ack(m.cc, feedback, line_rate(ports_toward(m.dst)), sim_->now());
  }
  const Time round_trip = sim_->now() - p->sent_at;
  sim_->packets().release(p);
  if (upto <= m.acked) return;
  // Progress undoes the backoff as far as the round trip allows. The ack echoes the send
  // time of the copy it answers, so the sample is never a resent packet's ambiguous one
  // (Karn's problem; TCP's timestamps, RFC 7323, solve it the same way).
  if (m.timeouts > 0) undo_backoff(m, round_trip);
  m.acked = upto;
  m.last_progress = sim_->now();
  if (cc_ != nullptr && m.sending && m.cc.window_bytes != INT64_MAX) {
    // The window may have room again.
    wake_ports_toward(m.dst);
  }
  if (m.next_seq < m.acked) m.next_seq = m.acked;
  if (m.kind == SendKind::kForGpu) rdma_.acknowledged(slot);
  if (m.sending && m.next_seq == m.packets) {
    // A rewind was overtaken by acknowledgements: nothing left to resend.
    m.sending = false;
    const auto it = std::find_if(sending_.begin(), sending_.end(), [&](const Sending& e) { return e.slot == slot; });
    const auto k = static_cast<std::size_t>(it - sending_.begin());
    sending_.erase(it);
    if (next_ > k) --next_;
    if (m.kind == SendKind::kForGpu) rdma_.queue_pair_leave(slot);
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
      paced_ports_ = 0;
    }
    if (for_gpu) {
      rdma_.complete(id, CompletionKind::kFinished, gpu_port, traffic_class);
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
  if (m.kind == SendKind::kForGpu) rdma_.rewound(slot);
  enter_rotation(slot);
}

void Nic::on_cnp(Packet* p) {
  SendState& m = sends_[p->message];
  ++counters_.cnps_received;
  sim_->packets().release(p);
  if (cc_ == nullptr) return;
  cc_->on_cnp(m.cc, sim_->now());
}

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

void Nic::on_departure(const Departure& d) { in_network_.on_departure(d); }

}  // namespace fabricsim
