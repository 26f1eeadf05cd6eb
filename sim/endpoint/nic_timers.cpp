// The transport's timers: retransmission (go-back-N from the first unacknowledged
// packet, with an exponential backoff that a clean round trip undoes), the congestion
// control's rate timer,
// and the pacer that wakes the ports when a paced message may send again.
#include <algorithm>
#include <bit>
#include <string>
#include <utility>

#include "sim/endpoint/nic.h"

namespace fabricsim {

void Nic::arm_retransmit_timer() {
  if (!retransmit_timer_.scheduled() && !unfinished_.empty()) {
    sim_->schedule_in(retransmit_timer_, config_.retransmit_timeout);
  }
}

Time Nic::timeout_of(const SendState& m) const {
  // Exponential backoff: a timer shorter than the path's round trip, or than a packet's
  // serialization, doubles until it is not, so it costs a few resends instead of
  // resending forever. A clean round trip takes it back down (on_ack).
  const int shift = std::min<int>(m.timeouts, kMaxBackoff);
  const Time limit = kTimeMax / 4;  // far beyond any run (deadlines from it saturate)
  return config_.retransmit_timeout > (limit >> shift) ? limit : config_.retransmit_timeout << shift;
}

void Nic::undo_backoff(SendState& m, Time round_trip) const {
  // The least backoff whose timer is still twice the round trip just seen: a path that
  // works again gets its timer back (a backoff kept for ever made every later loss wait
  // up to 2^30 timeouts), and a timer set below the round trip stays above it.
  int shift = 0;
  while (shift < m.timeouts && config_.retransmit_timeout <= (kTimeMax >> (shift + 2)) &&
         (config_.retransmit_timeout << shift) < 2 * round_trip) {
    ++shift;
  }
  m.timeouts = static_cast<std::uint8_t>(shift);
}

void Nic::on_retransmit_timer() {
  const Time now = sim_->now();
  Time next = kTimeMax;
  for (std::uint32_t slot : unfinished_) {
    SendState& m = sends_[slot];
    if (now - m.last_progress >= timeout_of(m) && m.next_seq > m.acked) {
      // Nothing acknowledged for a whole timeout with packets outstanding: resend them.
      ++counters_.timeouts;
      if (m.timeouts < kMaxBackoff) ++m.timeouts;
      m.next_seq = m.acked;
      m.last_progress = now;
      if (m.kind == SendKind::kForGpu) rdma_.rewound(slot);
      enter_rotation(slot);
    } else if (m.next_seq <= m.acked) {
      // Nothing outstanding (waiting its turn, its read, its window or a pause): nothing
      // can time out, so its clock starts over. Else the timer would come back every
      // picosecond, and time the first packet out the moment it left.
      m.last_progress = now;
    }
    // Saturating: a timer backed off to its limit late in a long run would otherwise
    // overflow into the past and fire every picosecond.
    const Time timeout = timeout_of(m);
    next = std::min(next, m.last_progress > kTimeMax - timeout ? kTimeMax : m.last_progress + timeout);
  }
  if (next != kTimeMax) sim_->schedule_at(retransmit_timer_, std::max(next, now + 1));
}

void Nic::arm_rate_timer() {
  if (cc_ == nullptr) return;
  Time next = kTimeMax;
  for (std::uint32_t slot : unfinished_) next = std::min(next, cc_->next_timer(sends_[slot].cc));
  if (next == kTimeMax) return;
  if (!rate_timer_.scheduled() || rate_timer_.event_time() > next) sim_->schedule_at(rate_timer_, std::max(next, sim_->now()));
}

void Nic::on_rate_timer() {
  const Time now = sim_->now();
  for (std::uint32_t slot : unfinished_) {
    SendState& m = sends_[slot];
    if (cc_->next_timer(m.cc) <= now) cc_->on_timer(m.cc, line_rate(ports_toward(m.dst)), now);
  }
  arm_rate_timer();
  wake_ports();  // a faster rate may let a paced flow go now
}

void Nic::on_pacer() {
  // Only the ports that found nothing but a paced message: the others have nothing it frees.
  for (std::uint64_t ports = std::exchange(paced_ports_, 0); ports != 0; ports &= ports - 1) {
    ports_[static_cast<std::size_t>(std::countr_zero(ports))]->wake();
  }
}

const char* Nic::timer_name(const EventHandler& h) const {
  if (&h == &retransmit_timer_) return "retransmit timer";
  if (&h == &rate_timer_) return "congestion-control rate timer";
  if (&h == &pacer_) return "pacer";
  if (&h == &sent_notifier_) return "sent notifier";
  if (&h == &waker_) return "port waker";
  return nullptr;
}

std::string Nic::waiting_for() const {
  std::size_t outstanding = 0, timed_out = 0;
  std::uint32_t backoff = 0;
  for (std::uint32_t slot : unfinished_) {
    const SendState& m = sends_[slot];
    if (m.next_seq > m.acked) ++outstanding;
    if (m.timeouts > 0) ++timed_out;
    backoff = std::max<std::uint32_t>(backoff, m.timeouts);
  }
  std::string text = std::to_string(unfinished_.size()) + " messages unacknowledged (" + std::to_string(outstanding) +
                     " with packets in flight, " + std::to_string(timed_out) + " timed out";
  if (backoff > 0) text += ", timer doubled up to " + std::to_string(backoff) + " times";
  return text + "), " + std::to_string(counters_.timeouts) + " timeouts so far";
}

}  // namespace fabricsim
