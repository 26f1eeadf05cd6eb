#pragma once
// One packet on the wire: a plain struct that fits one cache line, pool-allocated and
// handed from element to element by pointer. Never copied into queues.
#include <cstdint>
#include <type_traits>

#include "sim/time.h"

namespace fabricsim {

using NodeId = std::uint32_t;  // a NIC or switch in the Network
using HostId = std::uint32_t;  // an endpoint (NIC) number, dense from 0
using MessageId = std::uint32_t;

enum class PacketKind : std::uint8_t { kData, kAck };

struct Packet {
  Time sent_at;           // when the source NIC put it on the wire (for latency stats)
  MessageId message;      // the message (flow) it belongs to
  HostId src;             // source endpoint
  HostId dst;             // destination endpoint
  std::uint32_t seq;      // data: packet number within the message; ack: the one acknowledged
  std::uint32_t wire_bytes;   // bytes on the wire, headers included
  std::uint32_t payload;  // data: payload bytes; ack: packets this ack covers
  std::uint32_t flow_hash;  // per-flow hash input for ECMP (stable for the whole message)
  PacketKind kind;
  std::uint8_t traffic_class;
  std::uint8_t hops;      // switches traversed so far
  std::uint8_t ecn;       // reserved for the lossless-fabric work (ECN bits)
  std::uint16_t ingress_port;  // port it arrived on at the current node
};

static_assert(std::is_trivially_copyable_v<Packet>);
static_assert(sizeof(Packet) <= 64, "a packet must fit one cache line");

}  // namespace fabricsim
