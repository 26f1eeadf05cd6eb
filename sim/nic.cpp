#include "sim/nic.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <stdexcept>

#include "sim/rng.h"
#include "sim/simulator.h"

namespace fabricsim {
namespace {
// Flow hashes are fixed per message and differ between a message and its acks.
std::uint32_t data_flow_hash(MessageId id) { return static_cast<std::uint32_t>(mix64(id)); }
std::uint32_t ack_flow_hash(MessageId id) { return static_cast<std::uint32_t>(mix64(id) >> 32); }
}  // namespace

PortIndex Nic::add_port(EgressPort& port) {
  if (ports_.size() == kMaxPorts) throw std::length_error("an endpoint has at most 64 ports");
  const auto index = static_cast<PortIndex>(ports_.size());
  ports_.push_back(&port);
  port.set_source(this, index);
  return index;
}

void Nic::set_routes(const RouteTable& table) {
  route_mask_.assign(table.destinations(), 0);
  for (HostId h = 0; h < table.destinations(); ++h) {
    for (PortIndex p : table.to(h)) route_mask_[h] |= std::uint64_t{1} << p;
  }
}

std::uint64_t Nic::ports_toward(HostId dst) const {
  if (dst < route_mask_.size()) return route_mask_[dst];
  return ports_.size() == 1 ? 1u : 0u;
}

void Nic::post(MessageId id) {
  Message& m = (*messages_)[id];
  assert(m.src == host_);
  m.posted = sim_->now();
  const std::uint64_t ports = ports_toward(m.dst);
  if (ports == 0) throw std::logic_error("message posted toward an unreachable host");
  sending_.push_back({id, ports});
  for (std::uint64_t rest = ports; rest != 0; rest &= rest - 1) ports_[std::countr_zero(rest)]->wake();
}

Packet* Nic::pull(PortIndex port) {
  // The next message, in round-robin order, that may leave through `port`.
  const std::size_t n = sending_.size();
  if (n == 0) return nullptr;
  if (next_ >= n) next_ = 0;
  std::size_t pick = n;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = (next_ + i) % n;
    if ((sending_[k].ports >> port) & 1u) {
      pick = k;
      break;
    }
  }
  if (pick == n) return nullptr;
  const MessageId id = sending_[pick].id;
  Message& m = (*messages_)[id];

  Packet* p = sim_->packets().allocate();
  const std::int64_t offset = static_cast<std::int64_t>(m.next_seq) * config_.mtu;
  const auto payload = static_cast<std::uint32_t>(std::min<std::int64_t>(config_.mtu, m.bytes - offset));
  p->sent_at = sim_->now();
  p->message = id;
  p->src = host_;
  p->dst = m.dst;
  p->seq = m.next_seq;
  p->payload = payload;
  p->wire_bytes = payload + config_.header_bytes;
  p->flow_hash = data_flow_hash(id);
  p->kind = PacketKind::kData;
  p->traffic_class = m.traffic_class;
  p->hops = 0;
  p->ecn = 0;
  p->ingress_port = 0;
  ++counters_.data_packets_sent;

  if (++m.next_seq == m.packets) {
    // All sent: leave the rotation; keep the order of the others.
    sending_.erase(sending_.begin() + static_cast<std::ptrdiff_t>(pick));
    next_ = pick;
  } else {
    next_ = pick + 1;
  }
  return p;
}

void Nic::receive(Packet* p, PortIndex /*in_port*/) {
  if (p->kind == PacketKind::kData) {
    on_data(p);
  } else {
    on_ack(p);
  }
}

void Nic::on_data(Packet* p) {
  Message& m = (*messages_)[p->message];
  ++counters_.data_packets_received;
  counters_.payload_bytes_received += p->payload;
  ++m.received;
  ++m.unacked;
  const bool last = m.received == m.packets;
  if (last) m.delivered = sim_->now();
  if (last || m.unacked >= config_.ack_interval) {
    Packet* ack = sim_->packets().allocate();
    *ack = *p;
    ack->sent_at = sim_->now();
    ack->src = host_;
    ack->dst = p->src;
    ack->payload = m.unacked;  // packets covered by this ack
    ack->wire_bytes = config_.ack_bytes;
    ack->flow_hash = ack_flow_hash(p->message);
    ack->kind = PacketKind::kAck;
    ack->traffic_class = config_.ack_traffic_class;
    ack->hops = 0;
    m.unacked = 0;
    ++counters_.acks_sent;
    // Of the ports toward the sender, the one with the least waiting.
    const std::uint64_t ports = ports_toward(ack->dst);
    EgressPort* best = nullptr;
    for (std::uint64_t rest = ports; rest != 0; rest &= rest - 1) {
      EgressPort* candidate = ports_[std::countr_zero(rest)];
      if (best == nullptr || candidate->queued_bytes() < best->queued_bytes()) best = candidate;
    }
    best->enqueue(ack);
  }
  sim_->packets().release(p);
}

void Nic::on_ack(Packet* p) {
  const MessageId id = p->message;
  Message& m = (*messages_)[id];
  m.acked += p->payload;
  sim_->packets().release(p);
  if (m.acked == m.packets) {
    m.finished = sim_->now();
    ++counters_.messages_finished;
    if (MessageObserver* o = messages_->observer()) o->on_message_finished(id, sim_->now());
  }
}

}  // namespace fabricsim
