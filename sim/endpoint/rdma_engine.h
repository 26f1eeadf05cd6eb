#pragma once
// An RDMA NIC's work for the GPUs behind it, and a GPU's side of that work (as the
// hardware has them, on a cluster with `nic_model: rdma`):
// - a GPU posts a message bound for another node as a work request over PCIe, and its
//   program goes on once it has posted (as NCCL's kernel does, leaving the data to the
//   proxy's RDMA write); the message finishes when the NIC's completion for its
//   acknowledgement arrives;
// - the NIC's queue pair (one per GPU pair and connection) reads the payload out of the
//   GPU's memory in DMA reads a window ahead of what it sends, while the NIC's transport
//   runs go-back-N and congestion control on the wire;
// - the receiving NIC writes each new packet into its GPU's memory and tells it of
//   delivery with a completion behind the last write;
// - a GPU answers reads without transport state: PCIe is lossless, and its answers follow
//   the order the NIC asked in.
// Part of its endpoint (sim/endpoint/nic.h), whose send slots, ports and counters it
// works on.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/core/packet.h"
#include "sim/endpoint/nic_config.h"
#include "sim/endpoint/transport_state.h"
#include "sim/message.h"
#include "sim/net/packet_sink.h"

namespace fabricsim {

class Nic;

class RdmaEngine {
 public:
  RdmaEngine(Nic& nic, const NicConfig& config);

  // The GPU's side.
  // Posts message `id` as a work request to the NIC on `port`; posted is sent, for the GPU.
  void post(MessageId id, const Message& d, PortIndex port);
  void on_read_request(Packet* p, PortIndex in_port);
  // The next packet of the read answer in the endpoint's rotation at `pick`.
  Packet* pull_read_response(std::size_t pick);
  void on_completion(Packet* p);

  // The NIC's side.
  void on_work_request(Packet* p, PortIndex in_port);
  void on_read_response(Packet* p);
  // Received data packet `p` of the GPU's message `id`, written into its memory over
  // `gpu_port`.
  void write_to_gpu(Packet* p, MessageId id, PortIndex gpu_port);
  // Tells the GPU behind `port` that message `id` is finished or delivered.
  void complete(MessageId id, CompletionKind kind, PortIndex port, std::uint8_t traffic_class);
  // A send slot's queue pair, as it enters or leaves the endpoint's rotation.
  void queue_pair_enter(std::uint32_t slot);
  void queue_pair_leave(std::uint32_t slot);
  // As packet m.next_seq of send slot `slot` leaves: room to read more, perhaps.
  void fetch_later(std::uint32_t slot);
  // Go-back-N rewound send slot `slot`: what was sent after its next_seq is read again.
  void rewound(std::uint32_t slot);
  // Acknowledged past what a rewind had read again: those reads are not needed.
  void acknowledged(std::uint32_t slot);
  // Reads the ports made room for: issued from the endpoint's waker, not inside a pull.
  bool fetches_due() const { return !fetch_due_.empty(); }
  void run_due_fetches();

 private:
  void fetch(std::uint32_t slot);
  void due_for_fetch(std::uint32_t slot);
  std::uint32_t fetch_limit(std::uint32_t slot, std::uint32_t next_seq) const;
  std::uint32_t queue_pair_of(HostId src, HostId dst, std::uint16_t connection);

  Nic& nic_;
  std::uint32_t fetch_window_packets_ = 1;  // read-ahead per queue pair
  std::uint32_t fetch_batch_packets_ = 1;   // and the size of one read
  std::vector<std::uint32_t> fetch_due_;    // send slots to read more for (from the waker)
  std::vector<std::uint32_t> fetch_round_;  // the waker's round of them
  // The queue pairs, one per GPU pair and connection: the send slots of each in the
  // rotation, in posting (sequence) order, so a work request's place in its queue pair is
  // found without scanning the rotation (an AllToAll keeps a queue pair per peer).
  struct QueuePair {
    std::vector<std::uint32_t> in_rotation;
  };
  std::vector<QueuePair> queue_pairs_;
  std::unordered_map<std::uint64_t, std::uint32_t> queue_pair_index_;  // (GPU, peer, connection) -> queue pair
};

}  // namespace fabricsim
