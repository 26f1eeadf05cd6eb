#pragma once
// A message: `bytes` from one host to another, sent as a reliable stream of MTU-sized
// packets. The table is flat and indexed by id; the source NIC touches only the send
// fields and the destination NIC only the receive fields.
#include <cstdint>
#include <vector>

#include "sim/packet.h"
#include "sim/time.h"

namespace fabricsim {

struct Message {
  HostId src = 0;
  HostId dst = 0;
  std::int64_t bytes = 0;
  std::uint32_t packets = 0;  // ceil(bytes / mtu), at least 1
  std::uint8_t traffic_class = 0;
  Time posted = -1;     // handed to the source NIC
  Time delivered = -1;  // last packet arrived at the destination
  Time finished = -1;   // last packet acknowledged back at the source
  // Source side.
  std::uint32_t next_seq = 0;
  std::uint32_t acked = 0;
  // Destination side.
  std::uint32_t received = 0;
  std::uint32_t unacked = 0;
};

// Told when a message completes (its last byte is acknowledged), e.g. to release the
// next step of a collective. Called once per message, never per packet.
class MessageObserver {
 public:
  virtual ~MessageObserver() = default;
  virtual void on_message_finished(MessageId id, Time now) = 0;
};

class MessageTable {
 public:
  MessageId add(HostId src, HostId dst, std::int64_t bytes, std::uint8_t traffic_class, std::uint32_t packets) {
    Message m;
    m.src = src;
    m.dst = dst;
    m.bytes = bytes;
    m.traffic_class = traffic_class;
    m.packets = packets;
    messages_.push_back(m);
    return static_cast<MessageId>(messages_.size() - 1);
  }
  Message& operator[](MessageId id) { return messages_[id]; }
  const Message& operator[](MessageId id) const { return messages_[id]; }
  std::size_t size() const { return messages_.size(); }
  const std::vector<Message>& all() const { return messages_; }
  void reserve(std::size_t n) { messages_.reserve(n); }

  void set_observer(MessageObserver* o) { observer_ = o; }
  MessageObserver* observer() const { return observer_; }

 private:
  std::vector<Message> messages_;
  MessageObserver* observer_ = nullptr;
};

}  // namespace fabricsim
