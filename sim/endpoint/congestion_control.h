#pragma once
// The sender's congestion control, behind one interface so that schemes are chosen by
// name and added without touching the NIC (sim/endpoint/cc/ holds them). A scheme object holds
// only its settings and is shared by every NIC; each flow's state lives in the flow
// (CcFlow, inside the message's sender state). The NIC paces each flow at its rate,
// keeps its bytes in flight under its window, and reports what happens to it.
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

#include "sim/net/telemetry.h"
#include "sim/core/time.h"

namespace fabricsim {

// One flow's congestion state: what the NIC obeys, and the scheme's own bytes.
struct CcFlow {
  static constexpr std::size_t kStateBytes = 176;
  double rate_bps = 0;                    // pacing rate; at or above line rate: unpaced
  std::int64_t window_bytes = INT64_MAX;  // bytes in flight allowed
  alignas(8) std::byte state[kStateBytes];

  template <typename T>
  T& as() {
    static_assert(sizeof(T) <= kStateBytes && std::is_trivially_copyable_v<T>, "a scheme's flow state must fit CcFlow");
    return *std::launder(reinterpret_cast<T*>(state));
  }
  template <typename T>
  const T& as() const {
    return *std::launder(reinterpret_cast<const T*>(state));
  }
};

// What an acknowledgement tells the sender.
struct AckFeedback {
  std::uint32_t acked_packets;  // cumulative, in order
  std::uint32_t next_seq;       // the sender's next packet to send (HPCC's snd_nxt)
  Time rtt;                     // now minus when the acknowledged packet left
  const IntStack* telemetry;    // the path's INT, when the scheme asked for it
};

class CongestionControl {
 public:
  virtual ~CongestionControl() = default;
  virtual const char* name() const = 0;

  // A new flow over ports whose line rate sums to `line_bps`; `network_rtt` is the
  // fabric's largest base round trip (0: unknown).
  virtual void start(CcFlow& f, double line_bps, Time network_rtt, Time now) const = 0;
  virtual void on_sent(CcFlow& /*f*/, std::uint32_t /*wire_bytes*/, double /*line_bps*/, Time /*now*/) const {}
  virtual void on_ack(CcFlow& /*f*/, const AckFeedback& /*ack*/, double /*line_bps*/, Time /*now*/) const {}
  virtual void on_cnp(CcFlow& /*f*/, Time /*now*/) const {}
  // The flow's next timer (kTimeMax: none) and what happens when it comes.
  virtual Time next_timer(const CcFlow& /*f*/) const { return kTimeMax; }
  virtual void on_timer(CcFlow& /*f*/, double /*line_bps*/, Time /*now*/) const {}

  // The receiver's part: turn ECN marks into CNPs at most once per this interval per
  // flow (0: no CNPs).
  virtual Time cnp_interval() const { return 0; }
  // Switches stamp INT on data packets and receivers echo it.
  virtual bool wants_telemetry() const { return false; }
  // Packets are sent ECN-capable.
  virtual bool ecn_capable() const { return false; }
};

}  // namespace fabricsim
