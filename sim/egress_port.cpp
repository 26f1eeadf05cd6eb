#include "sim/egress_port.h"

#include <cassert>

#include "sim/simulator.h"

namespace fabricsim {

EgressPort::EgressPort(Simulator& sim, Bandwidth bandwidth, int traffic_classes, std::int64_t queue_capacity_bytes)
    : sim_(&sim), bandwidth_(bandwidth), capacity_(queue_capacity_bytes), classes_(traffic_classes) {}

bool EgressPort::enqueue(Packet* p) {
  assert(p->traffic_class < classes_.size());
  ClassQueue& q = classes_[p->traffic_class];
  if (q.bytes + p->wire_bytes > capacity_) {
    ++counters_.drops;
    counters_.dropped_bytes += p->wire_bytes;
    sim_->packets().release(p);
    return false;
  }
  if (in_service_ == nullptr && total_queued_bytes_ == 0) {
    // Idle and nothing waiting (any pull source is drained too, or we would be busy).
    begin_service(p);
    return true;
  }
  q.packets.push_back(p);
  q.bytes += p->wire_bytes;
  total_queued_bytes_ += p->wire_bytes;
  if (total_queued_bytes_ > counters_.max_queue_bytes) counters_.max_queue_bytes = total_queued_bytes_;
  if (in_service_ == nullptr) start_next();
  return true;
}

void EgressPort::start_next() {
  Packet* p = nullptr;
  if (total_queued_bytes_ > 0) {
    for (auto q = classes_.rbegin(); q != classes_.rend(); ++q) {
      if (q->packets.empty()) continue;
      p = q->packets.front();
      q->packets.pop_front();
      q->bytes -= p->wire_bytes;
      total_queued_bytes_ -= p->wire_bytes;
      break;
    }
  } else if (source_ != nullptr) {
    p = source_->pull(source_port_);
  }
  in_service_ = nullptr;
  if (p != nullptr) begin_service(p);
}

void EgressPort::begin_service(Packet* p) {
  in_service_ = p;
  service_time_ = serialization(p->wire_bytes, bandwidth_);
  sim_->schedule_in(*this, service_time_);
}

void EgressPort::on_event() {
  Packet* p = in_service_;
  counters_.bytes_sent += p->wire_bytes;
  ++counters_.packets_sent;
  counters_.busy_time += service_time_;
  link_->transmit(p);
  start_next();
}

}  // namespace fabricsim
