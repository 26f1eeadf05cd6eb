#pragma once
// One packet on the wire: a plain struct that fits one cache line, pool-allocated and
// handed from element to element by pointer. Never copied into queues.
#include <cstdint>
#include <type_traits>

#include "sim/core/rng.h"
#include "sim/core/time.h"

namespace fabricsim {

using NodeId = std::uint32_t;  // a NIC or switch in the Network
using HostId = std::uint32_t;  // an endpoint (NIC) number, dense from 0
using MessageId = std::uint32_t;

enum class PacketKind : std::uint8_t {
  kData,
  kAck,    // cumulative: `seq` packets of the message received in order
  kNack,   // a gap: resend from `seq`
  kCnp,    // congestion notification (DCQCN) for the message
  kPause,  // PFC for `traffic_class`: payload 1 = XOFF, 0 = XON; hop by hop, never forwarded
  kCredit,  // link-level flow control: the far end freed `payload` bytes of `traffic_class`'s
            // buffer (an InfiniBand/PCIe/NVLink credit update); hop by hop, never forwarded
  // Between a GPU and its RDMA NIC over PCIe (never on the fabric):
  kWorkRequest,   // a posted send (WQE): message `message`, `seq` packets, `sent_at` bytes
  kReadRequest,   // the NIC's DMA read of packets seq .. seq + payload - 1 (`sent_at`
                  // bytes) of its send slot `message`
  kReadResponse,  // one packet's payload for send slot `message`, packet number `seq`
  kDmaWrite,      // a received packet's payload written into the GPU's memory
  kCompletion,    // a completion (CQE) for message `message`: `seq` is a CompletionKind
};

// In-network collectives (NVLink SHARP on NVSwitch, SHARP on InfiniBand switches): what a
// switch does with a data packet beyond forwarding it. These travel only over lossless
// (credit-based) links and are never acknowledged.
enum class InNetwork : std::uint8_t {
  kNone,
  kReduce,     // a contribution: a reducing switch adds it to the sum for (dst, recv_slot,
               // seq) and sends the sum on once `group` contributions are in
  kReduced,    // the sum, on its way to dst
  kMulticast,  // a switch holding multicast group `group` sends a copy to every member
  kReplica,    // one member's copy (the receiver finds its slot by the message's name)
  kReduceAll,  // SHARP: a contribution to the sum `recv_slot` of multicast group `group`,
               // which a reducing switch holding the group returns to every member
  kReducedAll, // that sum, between the switch's reduction engine and its copies
};

// The name a SHARP sum's copies carry as their source (no endpoint has it): with the
// sum's number as sequence, the members find the receive slot they opened for it.
inline constexpr std::uint32_t kSumSource = 0xffffffffu;

// What a kCompletion reports (its `seq`).
enum class CompletionKind : std::uint32_t { kFinished, kDelivered };

// ECN codepoint bits as carried in the IP header.
inline constexpr std::uint8_t kEcnCapable = 1;
inline constexpr std::uint8_t kEcnCongested = 3;

struct Packet {
  Time sent_at;           // data: when it left its source; ack, NACK, CNP: that of the
                          // data packet it answers (the sender's RTT sample)
  std::uint32_t message;  // the message's send slot at its source (acks bring it back)
  HostId src;             // source endpoint
  HostId dst;             // destination endpoint
  std::uint32_t seq;      // data: packet number within the message; ack: the one acknowledged
  std::uint32_t wire_bytes;   // bytes on the wire, headers included
  std::uint32_t payload;  // data: payload bytes; ack: packets this ack covers
  std::uint32_t recv_slot;  // data: the message's receive slot at its destination
  std::uint32_t src_group;  // routing groups of src and dst (like an address prefix): switch
  std::uint32_t dst_group;  // tables are keyed by group, with per-host entries near the host
  std::uint32_t sequence;   // the message's sequence at its source: with src, its name; a late
                            // packet of a finished message whose slot was reused is recognised
  PacketKind kind;
  std::uint8_t traffic_class;
  std::uint8_t hops;      // switches traversed so far
  std::uint8_t ecn;       // kEcnCapable, or kEcnCongested once a switch marked it
  std::uint16_t ingress_port;  // port it arrived on at the current node
  std::uint8_t ingress_class;  // its class when it arrived there (buffer accounting)
  std::uint32_t pool_index;    // its place in the packet pool (where its INT stack is)
  InNetwork in_network;        // kNone for ordinary traffic
  std::uint8_t reserved;
  std::uint16_t group;         // kReduce: contributions to wait for; kMulticast: the group
};

static_assert(std::is_trivially_copyable_v<Packet>);

// ECMP's per-flow input, from the message's name (source endpoint, sequence), which every
// packet of it carries: fixed for the whole message, and different for its answers (an
// ack travels the other way, named by its destination, the message's source).
// The data packets' hash of message (src, sequence); its answers hash with `answer`.
inline std::uint32_t message_hash(HostId src, std::uint32_t sequence, bool answer = false) {
  const std::uint64_t z = mix64((std::uint64_t{src} << 32) | sequence);
  return answer ? static_cast<std::uint32_t>(z >> 32) : static_cast<std::uint32_t>(z);
}
inline std::uint32_t flow_hash(const Packet& p) {
  const bool data = p.kind == PacketKind::kData;
  return message_hash(data ? p.src : p.dst, p.sequence, !data);
}
static_assert(sizeof(Packet) <= 64, "a packet must fit one cache line");

}  // namespace fabricsim
