#include "sim/net/egress_port.h"

#include <algorithm>
#include <cassert>

#include "sim/core/simulator.h"

namespace fabricsim {

EgressPort::EgressPort(Simulator& sim, Bandwidth bandwidth, int traffic_classes, std::int64_t queue_capacity_bytes)
    : sim_(&sim),
      bandwidth_(bandwidth),
      class_count_(static_cast<std::uint8_t>(traffic_classes)),
      capacity_(queue_capacity_bytes),
      more_queues_(static_cast<std::size_t>(traffic_classes - 1)),
      more_counters_(static_cast<std::size_t>(traffic_classes - 1)) {}

SlotBlockPool& EgressPort::slot_blocks() { return sim_->slot_blocks(); }

void EgressPort::maybe_mark(Packet* p, std::int64_t queued) {
  if (ecn_on_ && p->ecn == kEcnCapable && ecn_->should_mark(queued, *rng_)) {
    p->ecn = kEcnCongested;
    ++counters_of(p->traffic_class).ecn_marks;
  }
}

void EgressPort::count_drop(Packet* p) {
  ++counters_of(p->traffic_class).drops;
  dropped_bytes_ += p->wire_bytes;
  sim_->packets().release(p);
}

bool EgressPort::enqueue(Packet* p, bool granted) {
  assert(p->traffic_class < class_count_);
  ClassQueue& q = queue(p->traffic_class);
  if (q.bytes + p->wire_bytes > capacity_ && !granted) {
    count_drop(p);
    return false;
  }
  if (ecn_on_ && !ecn_->mark_on_dequeue) maybe_mark(p, q.bytes);
  if (!busy() && total_queued_bytes_ == 0 && can_start(p->traffic_class, p->wire_bytes)) {
    // Idle and nothing waiting (any pull source is drained too, or we would be busy).
    if (ecn_on_ && ecn_->mark_on_dequeue) maybe_mark(p, 0);
    begin_service(queued(p));
    return true;
  }
  q.packets.push_back(slot_blocks(), queued(p));
  if (p->traffic_class == 0) note_next_slot();
  q.bytes += p->wire_bytes;
  total_queued_bytes_ += p->wire_bytes;
  if (total_queued_bytes_ > max_queue_bytes_) max_queue_bytes_ = total_queued_bytes_;
  if (class_count_ > 1) {
    ClassCounters& cc = counters_of(p->traffic_class);
    if (q.bytes > cc.max_queue_bytes) cc.max_queue_bytes = q.bytes;
  }
  if (!busy()) start_next();
  return true;
}

void EgressPort::start_next() {
  if (total_queued_bytes_ > 0) {
    for (int c = class_count_ - 1; c >= 0; --c) {
      ClassQueue& q = queue(c);
      if (q.packets.empty() || paused(static_cast<std::uint8_t>(c))) continue;
      const Queued next = q.packets.front();
      const std::int64_t wire_bytes = next.departure.wire_bytes;
      if (credit_based_ && credit_[static_cast<std::size_t>(c)].available < wire_bytes) {
        note_credit_wait(static_cast<std::uint8_t>(c));
        continue;
      }
      q.packets.pop_front(slot_blocks());
      if (c == 0) note_next_slot();
      q.bytes -= wire_bytes;
      total_queued_bytes_ -= wire_bytes;
      if (ecn_on_ && ecn_->mark_on_dequeue) maybe_mark(sim_->packets().at(next.packet), q.bytes);
      begin_service(next);
      return;
    }
  }
  // (The port still reads busy while its source makes the packet: nothing re-enters.)
  Packet* p = has_source_ ? source_->pull(source_port_) : nullptr;
  in_service_.packet = kIdle;
  if (p != nullptr) begin_service(queued(p));
}

void EgressPort::begin_service(const Queued& q) {
  const std::uint8_t c = q.departure.traffic_class;
  if (credit_based_) {
    credit_[c].available -= q.departure.wire_bytes;
    end_credit_wait(c);
  }
  in_service_ = q;
  service_time_ = serialization(q.departure.wire_bytes, bandwidth_);
  sim_->schedule_in(*this, service_time_);
}

void EgressPort::on_event() {
  // The packet itself is not read here (see Queued).
  const std::uint32_t p = in_service_.packet;
  const Departure d = in_service_.departure;
  busy_time_ += service_time_;
  if (d.traffic_class == 0) {
    sent_bytes_0_ += d.wire_bytes;
    ++sent_packets_0_;
  } else {
    ClassCounters& cc = counters_of(d.traffic_class);
    cc.bytes_sent += d.wire_bytes;
    ++cc.packets_sent;
  }
  if (telemetry_) stamp(sim_->packets().at(p));
  if (observer_ != nullptr) observer_->on_departure(d);
  if (down_) {
    count_drop(sim_->packets().at(p));
  } else {
    link_->transmit(p);
  }
  start_next();
}

void EgressPort::send_control(Packet* p) {
  if (down_) {
    sim_->packets().release(p);
    return;
  }
  link_->transmit(p->pool_index);
}

void EgressPort::set_down() {
  down_ = true;
  credit_based_ = false;
  paused_mask_ = 0;
  if (!busy()) start_next();
}

void EgressPort::set_paused(std::uint8_t c, bool pause) {
  const std::uint8_t bit = static_cast<std::uint8_t>(1u << c);
  ClassCounters& cc = counters_of(c);
  if (pause && !(paused_mask_ & bit)) {
    paused_mask_ |= bit;
    paused_since_[c] = sim_->now();
    ++cc.pauses_received;
  } else if (!pause && (paused_mask_ & bit)) {
    paused_mask_ &= static_cast<std::uint8_t>(~bit);
    cc.paused_time += sim_->now() - paused_since_[c];
    if (!busy()) start_next();
  }
}

void EgressPort::stamp(Packet* p) {
  tx_bytes_ += p->wire_bytes;
  if (p->kind != PacketKind::kData) return;
  sim_->packets().telemetry(p).push(IntHop{static_cast<std::uint32_t>(std::min<std::int64_t>(total_queued_bytes_, UINT32_MAX)),
                                           static_cast<std::uint32_t>(tx_bytes_),
                                           static_cast<std::uint32_t>(sim_->now() / 1000),
                                           static_cast<std::uint32_t>(bandwidth_.bits_per_second / 1'000'000)});
}

void EgressPort::set_credits(std::int64_t bytes, std::int64_t return_batch) {
  credit_.assign(class_count_, ClassCredit{bytes, -1});
  credit_bytes_ = bytes;
  owed_.assign(class_count_, 0);
  return_batch_ = std::max<std::int64_t>(1, return_batch);
  credit_based_ = true;
}

void EgressPort::credits_returned(std::uint8_t c, std::int64_t bytes) {
  credit_[c].available += bytes;
  if (!busy()) start_next();
}

void EgressPort::owe_credits(std::uint8_t c, std::int64_t bytes) {
  owed_[c] += bytes;
  if (owed_[c] < return_batch_) return;
  Packet* f = sim_->packets().allocate();
  f->kind = PacketKind::kCredit;
  f->traffic_class = c;
  f->payload = static_cast<std::uint32_t>(owed_[c]);
  f->wire_bytes = 8;
  owed_[c] = 0;
  send_control(f);
}

void EgressPort::note_credit_wait(std::uint8_t c) {
  if (credit_[c].wait_since < 0) credit_[c].wait_since = sim_->now();
}

void EgressPort::end_credit_wait(std::uint8_t c) {
  if (credit_[c].wait_since >= 0) {
    counters_of(c).credit_wait_time += sim_->now() - credit_[c].wait_since;
    credit_[c].wait_since = -1;
  }
}

void EgressPort::roll_up(PortCounters& c) const {
  // Each field by its own rule over the classes (add_class_counters); the queue's
  // high-water mark is the port's own, all classes' bytes together.
  c.total = {};
  for (std::size_t k = 0; k < class_count_; ++k) add_class_counters(c.total, c.per_class[k]);
  c.total.max_queue_bytes = max_queue_bytes_;
}

PortCounters EgressPort::counters() const {
  PortCounters c;
  for (std::size_t k = 0; k < class_count_; ++k) {
    c.per_class[k] = counters_of(static_cast<int>(k));
    if (k == 0) {
      c.per_class[0].bytes_sent = sent_bytes_0_;
      c.per_class[0].packets_sent = sent_packets_0_;
      if (class_count_ == 1) c.per_class[0].max_queue_bytes = max_queue_bytes_;
    }
  }
  roll_up(c);
  c.dropped_bytes = dropped_bytes_;
  c.busy_time = busy_time_;
  return c;
}

void EgressPort::adopt_counters(const PortCounters& c) {
  for (std::size_t k = 0; k < class_count_; ++k) counters_of(static_cast<int>(k)) = c.per_class[k];
  sent_bytes_0_ = c.per_class[0].bytes_sent;
  sent_packets_0_ = c.per_class[0].packets_sent;
  dropped_bytes_ = c.dropped_bytes;
  max_queue_bytes_ = c.total.max_queue_bytes;
  busy_time_ = c.busy_time;
}

PortCounters EgressPort::counters_at(Time now) const {
  PortCounters c = counters();
  for (int k = 0; k < kMaxTrafficClasses; ++k) {
    if ((paused_mask_ >> k) & 1u) c.per_class[static_cast<std::size_t>(k)].paused_time += now - paused_since_[static_cast<std::size_t>(k)];
  }
  if (paused_mask_ != 0) roll_up(c);
  return c;
}

}  // namespace fabricsim
