#include "sim/link.h"

#include "sim/simulator.h"

namespace fabricsim {

void Link::transmit(Packet* p) {
  if (cut_ != nullptr) {
    PacketPool& pool = cut_->sender->packets();
    CrossPacket& c = cut_->outbox->to[cut_->to_partition].emplace_back();
    c.arrives = cut_->sender->now() + latency_;
    c.link = cut_->index;
    c.packet = *p;
    if (pool.telemetry_enabled()) c.telemetry = pool.telemetry(p);
    pool.release(p);
    return;
  }
  const Time arrives = sim_->now() + latency_;
  in_flight_.push_back({arrives, p});
  if (!scheduled()) sim_->schedule_at(*this, arrives);
}

void Link::accept(Time arrives, Packet* p) {
  in_flight_.push_back({arrives, p});
  if (!scheduled()) sim_->schedule_at(*this, arrives);
}

void Link::on_event() {
  const Time now = sim_->now();
  // Deliver everything due now (several only when serialization rounds to zero).
  while (!in_flight_.empty() && in_flight_.front().arrives <= now) {
    Packet* p = in_flight_.front().packet;
    in_flight_.pop_front();
    far_end_->receive(p, far_port_);
  }
  if (!in_flight_.empty()) sim_->schedule_at(*this, in_flight_.front().arrives);
}

}  // namespace fabricsim
