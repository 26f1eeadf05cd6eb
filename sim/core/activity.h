#pragma once
// What endpoints do, as spans of simulated time, for timelines: compute, communication
// operations and the steps of collectives. A trace source in ns-3's sense: workloads
// report to a listener when one is attached, and nobody pays when none is. Reports come
// when a span ends, so they arrive in order of their end.
#include <cstdint>
#include <string_view>

#include "sim/core/packet.h"
#include "sim/core/time.h"

namespace fabricsim {

enum class Activity : unsigned char {
  kCompute,        // a training step's compute operation
  kCommunication,  // a communication operation (a collective, a send, a receive) at one rank
  kStep,           // one step of a collective's program: a send, a reduce, a copy
};

// What a span did, for the slice's args (-1 where it does not apply): a step's bytes, its
// peer rank, its place in the rank's program and its channel.
struct ActivityDetail {
  std::int64_t bytes = -1;
  int peer = -1;
  int step = -1;
  int channel = -1;
};

class ActivityListener {
 public:
  virtual ~ActivityListener() = default;
  // Whether collectives inside a training trace report their steps too (there can be
  // millions); collectives run alone always do.
  virtual bool wants_trace_steps() const { return false; }
  // `endpoint` did `what` from `begin` to `end`; `what` need not outlive the call.
  virtual void on_activity(HostId endpoint, Activity kind, std::string_view what, Time begin, Time end,
                           const ActivityDetail& detail) = 0;
};

}  // namespace fabricsim
