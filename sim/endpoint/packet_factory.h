#pragma once
// Every packet an endpoint makes, and what each kind carries (see PacketKind): data and
// its answers on the fabric; work requests, reads, DMA writes and completions between a
// GPU and its RDMA NIC over PCIe. Made on the spot from the pool and the endpoint's
// settings, so it costs nothing to hold.
#include <algorithm>
#include <cstdint>

#include "sim/core/packet.h"
#include "sim/core/packet_pool.h"
#include "sim/endpoint/nic_config.h"
#include "sim/endpoint/transport_state.h"
#include "sim/message.h"

namespace fabricsim {

class PacketFactory {
 public:
  PacketFactory(PacketPool& pool, const NicConfig& config) : pool_(pool), config_(config) {}

  // Payload of packet `seq` of a message of `bytes`: a full MTU but the last.
  std::uint32_t payload_of(std::int64_t bytes, std::uint32_t seq) const {
    const std::int64_t offset = static_cast<std::int64_t>(seq) * config_.mtu;
    return static_cast<std::uint32_t>(std::max<std::int64_t>(0, std::min<std::int64_t>(config_.mtu, bytes - offset)));
  }
  std::uint32_t wire_bytes_of(const SendState& m, std::uint32_t seq) const {
    return payload_of(m.bytes, seq) + config_.header_bytes;
  }

  // Packet m.next_seq of the message in send slot `slot`.
  Packet* data(const SendState& m, std::uint32_t slot, std::uint32_t src_group, std::uint32_t dst_group, Time now) const {
    Packet* p = pool_.allocate();
    const std::uint32_t payload = payload_of(m.bytes, m.next_seq);
    p->sent_at = now;
    p->message = slot;
    p->recv_slot = m.recv_slot;
    p->src = m.src;
    p->dst = m.dst;
    p->seq = m.next_seq;
    p->payload = payload;
    p->wire_bytes = payload + config_.header_bytes;
    p->sequence = m.sequence;
    p->src_group = src_group;
    p->dst_group = dst_group;
    p->kind = PacketKind::kData;
    p->traffic_class = m.traffic_class;
    p->ecn = config_.ecn_capable ? kEcnCapable : 0;
    p->in_network = m.in_network;
    p->group = m.group;
    return p;
  }

  // An ack, NACK or CNP about data packet `about`, back to its sender.
  Packet* control(PacketKind kind, const Packet& about, std::uint32_t seq) const {
    Packet* c = pool_.allocate();
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
    return c;
  }

  // A GPU's work request (WQE) for message `id`: everything the NIC's queue pair needs,
  // the payload left in the GPU's memory until the NIC reads it.
  Packet* work_request(MessageId id, const Message& d, HostId gpu, std::uint32_t src_group, std::uint32_t dst_group) const {
    Packet* w = pool_.allocate();
    w->sent_at = d.bytes;
    w->message = id;
    w->src = gpu;
    w->dst = d.dst;
    w->seq = d.packets;
    w->payload = 0;
    w->wire_bytes = config_.ack_bytes;
    w->recv_slot = d.recv_slot;
    w->sequence = d.sequence;
    w->src_group = src_group;
    w->dst_group = dst_group;
    w->kind = PacketKind::kWorkRequest;
    w->traffic_class = d.traffic_class;
    w->group = d.connection;  // which of the GPU pair's queue pairs
    return w;
  }

  // An RDMA NIC's DMA read of packets m.fetch_next .. limit - 1 of send slot `slot`.
  Packet* read_request(const SendState& m, std::uint32_t slot, std::uint32_t limit) const {
    const std::int64_t from = static_cast<std::int64_t>(m.fetch_next) * config_.mtu;
    const std::int64_t to = std::min<std::int64_t>(m.bytes, static_cast<std::int64_t>(limit) * config_.mtu);
    Packet* r = pool_.allocate();
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
    return r;
  }

  // A GPU's answer to a read (send state `m`): packet m.next_seq of it.
  Packet* read_response(const SendState& m, HostId gpu, Time now) const {
    Packet* p = pool_.allocate();
    const std::uint32_t payload = payload_of(m.bytes, m.next_seq);
    p->sent_at = now;
    p->message = m.recv_slot;
    p->src = gpu;
    p->dst = m.dst;
    p->seq = m.first_seq + m.next_seq;
    p->payload = payload;
    p->wire_bytes = payload + config_.header_bytes;
    p->sequence = m.sequence;
    p->kind = PacketKind::kReadResponse;
    p->traffic_class = m.traffic_class;
    return p;
  }

  // A received data packet, turned into its DMA write into the GPU's memory.
  void into_dma_write(Packet* p, MessageId id) const {
    p->kind = PacketKind::kDmaWrite;
    p->message = id;
    p->ingress_port = 0;  // made here (not relayed)
    p->wire_bytes = p->payload + config_.header_bytes;
    p->ecn = 0;
  }

  // A completion (CQE) for the GPU's message `id`.
  Packet* completion(MessageId id, CompletionKind kind, HostId nic, std::uint8_t traffic_class, Time now) const {
    Packet* c = pool_.allocate();
    c->sent_at = now;
    c->message = id;
    c->src = nic;
    c->dst = nic;
    c->seq = static_cast<std::uint32_t>(kind);
    c->wire_bytes = config_.ack_bytes;
    c->kind = PacketKind::kCompletion;
    c->traffic_class = traffic_class;
    return c;
  }

 private:
  PacketPool& pool_;
  const NicConfig& config_;
};

}  // namespace fabricsim
