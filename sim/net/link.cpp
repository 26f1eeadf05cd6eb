#include "sim/net/link.h"

#include "sim/core/simulator.h"

namespace fabricsim {

Link::Link(Simulator& sim, Time latency, PacketSink& far_end, PortIndex far_port)
    : far_end_(&far_end),
      sim_(&sim),
      latency_(latency),
      far_port_(far_port),
      narrow_(latency < (Time{1} << 32)),
      in_wide_(!narrow_) {
  if (!narrow_) wide_ = std::make_unique<Wide>();
}

void Link::cut(const CutEnd& end) {
  if (!wide_) wide_ = std::make_unique<Wide>();
  wide_->cut = &end;
  cut_ = true;
  narrow_ = false;
  in_wide_ = true;
}

void Link::push(Time arrives, std::uint32_t packet) {
  if (!in_wide_) {
    if (count_ < kInline) {
      slots_[(head_ + count_) % kInline] = {static_cast<std::uint32_t>(arrives), packet};
      ++count_;
      return;
    }
    spill();
  }
  wide_->ring.push_back({arrives, packet});
}

void Link::spill() {
  if (!wide_) wide_ = std::make_unique<Wide>();
  const Time now = sim_->now();
  for (; count_ > 0; --count_, head_ = static_cast<std::uint8_t>((head_ + 1) % kInline)) {
    wide_->ring.push_back({widen(slots_[head_].arrives_low, now), slots_[head_].packet});
  }
  head_ = 0;
  in_wide_ = true;  // (count_ is 0 again: the inline wire starts at slot 0 when it is back)
}

bool Link::pop_due(Time now, std::uint32_t& packet) {
  if (!in_wide_) {
    if (count_ == 0 || widen(slots_[head_].arrives_low, now) > now) return false;
    packet = slots_[head_].packet;
    head_ = static_cast<std::uint8_t>((head_ + 1) % kInline);
    --count_;
    return true;
  }
  RingBuffer<InFlight, 1>& ring = wide_->ring;
  if (ring.empty() || ring.front().arrives > now) return false;
  packet = ring.front().packet;
  ring.pop_front();
  // Back to the inline wire once what is left fits it with room to spare (not only when
  // the wire empties: a busy link seldom does, and on the heap ring each packet costs
  // two more lines, cold at scale).
  if (narrow_ && ring.size() <= kInline / 2) {
    for (; !ring.empty(); ring.pop_front()) {
      slots_[count_++] = {static_cast<std::uint32_t>(ring.front().arrives), ring.front().packet};
    }
    in_wide_ = false;
  }
  return true;
}

const Packet* Link::front_packet() const {
  if (!in_wide_) return count_ == 0 ? nullptr : sim_->packets().at(slots_[head_].packet);
  return wide_->ring.empty() ? nullptr : sim_->packets().at(wide_->ring.front().packet);
}

void Link::prefetch() const {
  if (const Packet* p = front_packet()) __builtin_prefetch(p);
  const char* end = reinterpret_cast<const char*>(far_end_);
  for (int line = 0; line < 6; ++line) __builtin_prefetch(end + 64 * line);
}

void Link::transmit(std::uint32_t packet) {
  if (cut_) {
    const CutEnd& cut = *wide_->cut;
    PacketPool& pool = cut.sender->packets();
    Packet* p = pool.at(packet);
    CrossPacket& c = cut.outbox->to[cut.to_partition].emplace_back();
    c.arrives = cut.sender->now() + latency_;
    c.link = cut.index;
    c.packet = *p;
    if (pool.telemetry_enabled()) c.telemetry = pool.telemetry(p);
    pool.release(p);
    return;
  }
  const Time arrives = sim_->now() + latency_;
  push(arrives, packet);
  if (!scheduled()) sim_->schedule_at(*this, arrives);
}

void Link::accept(Time arrives, Packet* p) {
  wide_->ring.push_back({arrives, p->pool_index});
  if (!scheduled()) sim_->schedule_at(*this, arrives);
}

void Link::on_event() {
  const Time now = sim_->now();
  // Deliver everything due now (several only when serialization rounds to zero).
  std::uint32_t packet;
  while (pop_due(now, packet)) far_end_->receive(sim_->packets().at(packet), far_port_);
  if (!in_wide_) {
    if (count_ > 0) sim_->schedule_at(*this, widen(slots_[head_].arrives_low, now));
  } else if (!wide_->ring.empty()) {
    sim_->schedule_at(*this, wide_->ring.front().arrives);
  }
}

}  // namespace fabricsim
