#pragma once
// The transmit side of a port: per-traffic-class FIFO queues counted in bytes with tail
// drop, strict priority between classes (higher class first), and a transmit state
// machine idle -> transmitting -> idle with one pending event while busy.
#include <cstdint>
#include <vector>

#include "sim/event_queue.h"
#include "sim/link.h"
#include "sim/packet_sink.h"
#include "sim/ring_buffer.h"
#include "sim/time.h"

namespace fabricsim {

class Simulator;

struct PortCounters {
  std::uint64_t bytes_sent = 0;
  std::uint64_t packets_sent = 0;
  std::uint64_t drops = 0;
  std::uint64_t dropped_bytes = 0;
  std::int64_t max_queue_bytes = 0;  // bytes waiting, all classes, not counting the one in service
  Time busy_time = 0;
};

class EgressPort final : public EventHandler {
 public:
  static constexpr std::int64_t kUnlimited = INT64_MAX;

  // `queue_capacity_bytes` applies to each class queue separately.
  EgressPort(Simulator& sim, Bandwidth bandwidth, int traffic_classes, std::int64_t queue_capacity_bytes);

  void attach(Link& link) { link_ = &link; }
  void set_source(PacketSource* source, PortIndex index_at_source) {
    source_ = source;
    source_port_ = index_at_source;
  }

  // Queues `p` for transmission or drops it (tail drop) when its class queue is full.
  // Returns false on a drop; the packet is then back in the pool.
  bool enqueue(Packet* p);
  // The source has something new: start sending if idle.
  void wake() {
    if (in_service_ == nullptr) start_next();
  }

  void on_event() override;  // transmission of the packet in service has ended

  bool busy() const { return in_service_ != nullptr; }
  Bandwidth bandwidth() const { return bandwidth_; }
  std::int64_t queued_bytes() const { return total_queued_bytes_; }
  std::int64_t queued_bytes(int traffic_class) const { return classes_[traffic_class].bytes; }
  const PortCounters& counters() const { return counters_; }
  const Link* link() const { return link_; }

 private:
  struct ClassQueue {
    RingBuffer<Packet*> packets;
    std::int64_t bytes = 0;
  };
  void start_next();
  void begin_service(Packet* p);

  Simulator* sim_;
  Bandwidth bandwidth_;
  std::int64_t capacity_;
  Link* link_ = nullptr;
  PacketSource* source_ = nullptr;
  PortIndex source_port_ = 0;
  Packet* in_service_ = nullptr;
  Time service_time_ = 0;
  std::int64_t total_queued_bytes_ = 0;
  std::vector<ClassQueue> classes_;
  PortCounters counters_;
};

}  // namespace fabricsim
