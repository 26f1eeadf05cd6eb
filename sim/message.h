#pragma once
// A message: `bytes` from one host to another, sent as a reliable stream of MTU-sized
// packets. The table holds each message's description and record, indexed by id.
#include <cstdint>
#include <mutex>
#include <vector>

#include "sim/core/chunked_slots.h"
#include "sim/core/packet.h"
#include "sim/core/time.h"

namespace fabricsim {

class MessageObserver;

// A message's receive slot when its destination runs in another process (that process
// opens it from a notice and names it in the packets as they arrive); a packet of such a
// message whose receive is over names none.
inline constexpr std::uint32_t kRemoteSlot = 0xfffffffeu;
inline constexpr std::uint32_t kNoSlot = 0xffffffffu;

// A message's description and record. The transport state is not here: the source NIC
// and the destination NIC keep their sides in slots of their own (sim/endpoint/transport_state.h).
struct Message {
  std::uint64_t serial = 0;    // creation number across the network: the message's id in records
  std::uint32_t sequence = 0;  // the n-th message from its source: (src, sequence) names it on
                               // the wire and is what ECMP hashes, so a message's path depends
                               // on neither slot reuse nor what other endpoints created first
  HostId src = 0;
  HostId dst = 0;
  HostId via = 0;             // it leaves by the ports toward this host (dst but for an
                              // in-network transfer, which may be addressed to its source)
  std::int64_t bytes = 0;
  std::uint32_t packets = 0;  // ceil(bytes / mtu), at least 1
  std::uint8_t traffic_class = 0;
  std::uint32_t tag = 0;      // the workload's word for the receiver (e.g. which receive it
                              // feeds), set when the message is made: it travels with it
  std::uint32_t recv_slot = 0;  // where the destination NIC keeps its receive state
  // In-network transfers (sim/core/packet.h InNetwork): kMulticast is the sender's record of a
  // multicast (each member has a receive record of its own, with no sender side), kReduce
  // one contribution (the first one made for a sum also records the sum's delivery).
  InNetwork in_network = InNetwork::kNone;
  std::uint16_t group = 0;      // kMulticast, kReduceAll: the multicast group; kReduce: contributions to the sum
  std::uint32_t stripe_base = 0;  // in-network: where its address falls in the stripe over
                                  // the sender's links (the same for every contribution to a
                                  // sum and for the sum's multicast: the piece's place in the buffer)
  // Flow fidelity only: it stands for this many equal messages on the same path at once
  // (the channels of a collective inside one NVSwitch domain), each of bytes / shares.
  std::uint16_t shares = 1;
  // The NCCL connection it travels on (a collective's channel, 0 for point-to-point): an
  // RDMA NIC keeps a queue pair per GPU pair and connection.
  std::uint16_t connection = 0;
  // The most its sender puts on the wire, in bits per second (0: no limit): a GPU's copy
  // engine for one NCCL channel, say, which cannot fill the GPU's NVLinks alone.
  double rate_cap_bps = 0;
  bool has_sender = true;       // a sender will report it sent and finished
  bool awaits_delivery = true;  // a receiver will report it delivered
  // The record, written as the NICs report (by the network's dispatcher).
  Time posted = -1;     // handed to the source NIC
  Time delivered = -1;  // every packet arrived at the destination
  Time finished = -1;   // the acknowledgement covering every packet is back at the source
  // Whose agents hear of it (the network's dispatcher tells them): the sender's of its
  // sending and finish, the receiver's of its delivery.
  MessageObserver* sender_observer = nullptr;
  MessageObserver* receiver_observer = nullptr;
};

// Told when a message completes (its last byte is acknowledged), e.g. to release the
// next step of a collective. Called once per message, never per packet.
class MessageObserver {
 public:
  virtual ~MessageObserver() = default;
  // Its name across processes (a run split over MPI processes names a remote message's
  // receiver by it): a unique order key of its own, or 0 when it has none.
  virtual std::uint32_t observer_key() const { return 0; }
  virtual void on_message_finished(MessageId id, Time now) = 0;
  // Every packet of the message has reached the destination (before the last ack): told
  // at the destination.
  virtual void on_message_delivered(MessageId /*id*/, Time /*now*/) {}
  // Every packet of the message has left its source once (the data is handed off; the
  // NIC still answers for resends): told at the source, by its own NIC.
  virtual void on_message_sent(MessageId /*id*/, Time /*now*/) {}
  // Flow fidelity, a flow that asks (FlowModel::Route::tells_start): it begins to move,
  // after its turn on its queue pair. Told at the source.
  virtual void on_message_started(MessageId /*id*/, Time /*now*/) {}
};

// Messages by id. Ids are slots: a finished message's slot is reused for a later one
// (from `recycle_from` on), so the table holds the messages in flight, not every message
// of the run. References stay valid while the table grows, and in a run split over
// threads each partition makes and finishes messages at once (sim/core/chunked_slots.h).
class MessageTable {
 public:
  // `counted`: a message of its own (false: a receive record of the message made just
  // before it by the same source, as a multicast's members have: that message's serial,
  // no sequence of its own).
  MessageId add(HostId src, HostId dst, std::int64_t bytes, std::uint8_t traffic_class, std::uint32_t packets,
                bool counted = true, std::uint64_t serial_of = 0) {
    const MessageId id = slots_.allocate();
    Message& m = slots_[id];
    {
      std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
      if (locking_) lock.lock();
      if (!counted) {
        m.serial = serial_of;
      } else {
        m.serial = created_++;
        if (src >= sent_by_.size()) sent_by_.resize(src + 1, 0);
        m.sequence = sent_by_[src]++;
      }
    }
    m.src = src;
    m.dst = dst;
    m.via = dst;
    m.bytes = bytes;
    m.traffic_class = traffic_class;
    m.packets = packets;
    return id;
  }
  // A run split over threads makes and frees messages on several threads at once.
  void set_locking(bool locking) {
    locking_ = locking;
    slots_.set_locking(locking);
  }
  // The message is finished and its owner told: its slot may serve a later message.
  void release(MessageId id) {
    if (id >= recycle_from_) slots_.release(id);
  }
  // Slots below `first` are never reused (messages whose records are read after the run).
  void set_recycle_from(MessageId first) { recycle_from_ = first; }
  bool recyclable(MessageId id) const { return id >= recycle_from_; }
  MessageId recycle_from() const { return recycle_from_; }
  Message& operator[](MessageId id) { return slots_[id]; }
  const Message& operator[](MessageId id) const { return slots_[id]; }
  std::size_t size() const { return slots_.size(); }  // slots
  std::uint64_t created() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return created_;
  }  // messages ever added
  // Every slot, in id order (for recorders after the run).
  class View {
   public:
    explicit View(const MessageTable& t) : t_(&t) {}
    std::size_t size() const { return t_->size(); }
    const Message& operator[](std::size_t i) const { return (*t_)[static_cast<MessageId>(i)]; }
    struct Iterator {
      const MessageTable* t;
      MessageId i;
      const Message& operator*() const { return (*t)[i]; }
      Iterator& operator++() {
        ++i;
        return *this;
      }
      bool operator!=(const Iterator& o) const { return i != o.i; }
    };
    Iterator begin() const { return {t_, 0}; }
    Iterator end() const { return {t_, static_cast<MessageId>(t_->size())}; }

   private:
    const MessageTable* t_;
  };
  View all() const { return View(*this); }

 private:
  ChunkedSlots<Message, 12> slots_;
  MessageId recycle_from_ = UINT32_MAX;
  mutable std::mutex mutex_;  // serials and sequences (a split run's partitions make messages at once)
  bool locking_ = true;
  std::uint64_t created_ = 0;
  std::vector<std::uint32_t> sent_by_;  // per source endpoint: messages created
};

}  // namespace fabricsim
