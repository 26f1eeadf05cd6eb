#pragma once
// Posts pre-registered messages to their source NICs at their start times. One pending
// event at a time, for the earliest start not yet reached.
#include <utility>
#include <vector>

#include "sim/core/event_queue.h"
#include "sim/network.h"

namespace fabricsim {

class MessageSchedule final : public EventHandler {
 public:
  // Posts on `sim`: its partition's, in a split run.
  MessageSchedule(Network& network, Simulator& sim) : network_(&network), sim_(&sim) { set_order(network.next_order_key()); }

  // Adds a start; call arm() once all are added. Equal start times keep insertion order.
  void add(Time start, MessageId id) { starts_.emplace_back(start, id); }
  void arm();
  void on_event() override;

 private:
  Network* network_;
  Simulator* sim_;
  std::vector<std::pair<Time, MessageId>> starts_;
  std::size_t next_ = 0;
};

}  // namespace fabricsim
