#include "sim/nic.h"

#include <algorithm>
#include <cassert>

#include "sim/rng.h"
#include "sim/simulator.h"

namespace fabricsim {
namespace {
// Flow hashes are fixed per message and differ between a message and its acks.
std::uint32_t data_flow_hash(MessageId id) { return static_cast<std::uint32_t>(mix64(id)); }
std::uint32_t ack_flow_hash(MessageId id) { return static_cast<std::uint32_t>(mix64(id) >> 32); }
}  // namespace

void Nic::post(MessageId id) {
  Message& m = (*messages_)[id];
  assert(m.src == host_);
  m.posted = sim_->now();
  sending_.push_back(id);
  port_->wake();
}

Packet* Nic::pull() {
  if (sending_.empty()) return nullptr;
  if (next_ >= sending_.size()) next_ = 0;
  const MessageId id = sending_[next_];
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
    sending_.erase(sending_.begin() + static_cast<std::ptrdiff_t>(next_));
  } else {
    ++next_;
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
    port_->enqueue(ack);
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
