#pragma once
// A message's transport state, split by owner as an RDMA queue pair's is: the source NIC
// keeps the send side, the destination NIC the receive side, each in slots of its own.
// A data packet names both slots (its send slot, to be echoed in acknowledgements, and
// the receive slot the destination opened when the message was made) and the message's
// name (source endpoint, sequence), which tells a late packet of a reused slot apart.
#include <cstdint>
#include <deque>
#include <vector>

#include "sim/endpoint/congestion_control.h"
#include "sim/core/packet.h"
#include "sim/core/time.h"

namespace fabricsim {

// What a send slot is for. An endpoint sends its own messages; an RDMA NIC sends for
// the GPUs behind it, from payload it reads out of the GPU's memory over PCIe; a GPU
// answers such a read with a stream of its payload, unacknowledged (PCIe is lossless).
enum class SendKind : std::uint8_t { kMessage, kForGpu, kReadResponse };

struct SendState {
  MessageId id = 0;            // the message's record: what its owner is told about
  HostId src = 0;              // whose message: this endpoint, or a GPU behind this NIC
  HostId dst = 0;
  HostId via = 0;              // whose ports it leaves by: dst, or for an in-network
                               // transfer to or through itself, another member's
  std::uint32_t sequence = 0;  // with the source, the message's name
  std::uint32_t recv_slot = 0;
  std::uint32_t packets = 0;
  std::int64_t bytes = 0;
  std::uint8_t traffic_class = 0;
  InNetwork in_network = InNetwork::kNone;  // not kNone: never acknowledged, done once sent
  std::uint16_t group = 0;
  std::uint16_t stripe = 0;    // in-network: the NIC's striping pattern over its ports
  std::uint32_t stripe_offset = 0;  // where in the pattern packet 0 falls (the same for
                                    // every contribution to one sum)
  bool active = false;         // in use and not yet fully acknowledged
  bool sending = false;        // in the NIC's rotation
  std::uint8_t timeouts = 0;   // each doubles the message's timer (capped)
  std::uint32_t next_seq = 0;  // next packet to send
  std::uint32_t acked = 0;     // packets acknowledged in order
  std::uint32_t sent_max = 0;  // one past the highest packet ever sent
  Time last_progress = 0;      // last acknowledgement progress (for the retransmission timer)
  Time next_send = 0;          // pacing by the congestion control's rate, or the cap below
  double cap_bps = 0;          // its sender's own rate limit on the wire (0: none)
  SendKind kind = SendKind::kMessage;
  std::uint16_t home_port = 0;  // kForGpu: the PCIe port to its GPU; kReadResponse: the
                                // port to the NIC that asked
  std::uint32_t fetched = 0;    // kForGpu: packets read into NIC memory (next_seq .. fetched
                                // - 1 wait there to be sent)
  std::uint32_t fetch_next = 0; // kForGpu: the next packet to ask the GPU for
  bool fetch_due = false;       // kForGpu: waits for the NIC's next read round
  std::uint32_t queue_pair = UINT32_MAX;  // kForGpu: its queue pair at the NIC
  bool queue_pair_head = false;           // kForGpu: the first of its queue pair's sends
  std::uint32_t first_seq = 0;  // kReadResponse: the packet number of its first packet
  // Last: without congestion control a pull and an ack read only the two lines above.
  CcFlow cc;                   // the congestion control's state for this flow
};

struct RecvState {
  MessageId id = 0;
  HostId src = 0;
  std::uint32_t sequence = 0;
  std::uint32_t packets = 0;
  bool active = false;         // opened and not yet fully received
  bool in_network = false;     // a multicast copy or a switch's sum: never acknowledged
  std::uint32_t expected = 0;  // packets received in order
  std::uint32_t received = 0;  // distinct packets received
  std::uint32_t unacked = 0;   // received since the last acknowledgement
  Time last_cnp = -1;
  Time last_nack = -1;
  std::uint32_t last_nack_seq = UINT32_MAX;
  std::vector<std::uint64_t> out_of_order;  // bit s: packet s (>= expected) already here
};

// Slots reused once freed; references stay valid while it grows (a deque).
template <typename T>
class SlotTable {
 public:
  std::uint32_t allocate() {
    std::uint32_t i;
    if (!free_.empty()) {
      i = free_.back();
      free_.pop_back();
      slots_[i] = T{};
    } else {
      i = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    return i;
  }
  void release(std::uint32_t i) {
    slots_[i] = T{};  // frees what it holds (the out-of-order bitmap)
    free_.push_back(i);
  }
  T& operator[](std::uint32_t i) { return slots_[i]; }
  const T& operator[](std::uint32_t i) const { return slots_[i]; }
  std::size_t size() const { return slots_.size(); }

 private:
  std::deque<T> slots_;
  std::vector<std::uint32_t> free_;
};

}  // namespace fabricsim
