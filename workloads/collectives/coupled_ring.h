#pragma once
// Flow fidelity (network.flow_rings: coupled): a ring collective as one flow per channel
// instead of one per send. A ring of n ranks moves in 2(n - 1) steps (AllReduce; n - 1
// for AllGather and ReduceScatter); in each step every rank sends a chunk to its
// successor and the step ends when the slowest edge's chunk is in, so the whole ring runs
// at the rate of its tightest edge. One flow over every edge's links (each edge loading
// its own links, as its sends would) takes that rate by max-min, carries the edges'
// bytes once, and is delivered one path delay D after it drains; each rank is done
// (steps - 1) x D after that, the path delays of the steps before the last. That is the
// step-by-step time, 2(n - 1) (chunk / rate + D), wherever the rate holds for the whole
// collective; what differs is that the edges' links are loaded without the gaps of D
// between steps, and that every rank finishes at once. Where edges differ (inside a node
// and between nodes), the ring goes at the slower of two paces: its tightest edge's
// transfers one after another (the flow, then one path delay), and the chain of steps,
// each waiting for its predecessor's chunk, which round the ring costs the edges'
// transfers at their own rates and their path delays in turn, their means. A DP ring
// over n nodes is then one flow, not 2(n - 1) n: flows grow with the collectives, not
// with ranks squared
// (docs/model.md).
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "sim/core/event_queue.h"
#include "sim/message.h"
#include "sim/network.h"
#include "workloads/collectives/collective.h"
#include "workloads/collectives/collective_algorithms.h"

namespace fabricsim {

class CoupledRing final : public EventHandler, public MessageObserver {
 public:
  struct Ring {  // one channel's
    std::vector<std::pair<HostId, HostId>> edges;  // sender, successor
    int steps = 0;                                 // sends per edge
    std::int64_t chunk = 0;                        // payload bytes per send
    // NCCL's pipeline: each send in this many pieces, which follow one another round
    // the ring in each phase (AllReduce's reduce-scatter, then its all-gather).
    int pieces = 1;
    int phases = 1;
  };
  // The rings the ring algorithm's program for `op` (AllReduce, AllGather, ReduceScatter;
  // its pieces of params.chunk_bytes) would have, worked out from its ring order without building
  // the program, whose steps grow with ranks squared (39 million for a DP ring of 1,562
  // ranks on 8 channels). Else empty. Edges name the collective's ranks (a trace's
  // collectives repeat: worked out once per kind); `on_hosts` puts them on the members'
  // endpoints.
  static std::vector<Ring> rings_for(CollectiveOp op, int ranks, std::int64_t bytes, const AlgorithmParams& params);
  static std::vector<Ring> on_hosts(const std::vector<Ring>& rings, const std::vector<HostId>& hosts);
  // Channels whose rings are one and the same (the same ranks in the same order: a group
  // that ring_order cannot lay over nodes, whose channels all run rank k to k + 1) send
  // equal chunks over the same edges, so the same links, and max-min gives them equal
  // rates: one ring whose sends each stand for all of theirs runs the same, with a flow
  // per collective rather than per channel. Folds such rings into one and returns how
  // many it stands for (1: `rings` left as they were).
  static std::uint16_t fold_equal(std::vector<Ring>& rings);

  // `shares`: each ring stands for that many equal rings on the same links (channels
  // inside one NVSwitch domain, or those fold_equal folded; Message::shares). `on_done`
  // is told when every rank is done.
  CoupledRing(Network& network, std::vector<Ring> rings, std::uint16_t shares, std::uint8_t traffic_class,
              std::function<void(Time)> on_done);
  // The same over rings shared with other collectives of the same kind (a trace's
  // group repeats its collectives thousands of times over the same endpoints).
  CoupledRing(Network& network, std::shared_ptr<const std::vector<Ring>> rings, std::uint16_t shares,
              std::uint8_t traffic_class, std::function<void(Time)> on_done);
  CoupledRing(const CoupledRing&) = delete;
  CoupledRing& operator=(const CoupledRing&) = delete;

  // NCCL's costs on the ring (a `collective` under NCCL's model): its protocol's bytes on
  // the wire per payload byte, a channel's rate where it is a GPU's copy (inside a node;
  // 0: none), and the wait for NCCL's flag after each step's chunk is in (the edges'
  // mean, as for path delays), and NCCL's latency before it starts.
  struct Costs {
    double wire_factor = 1.0;
    double rate_cap_bps = 0;   // per send
    double capped_edges = 1;   // the share of edges under that cap (inside a node)
    Time step_sync = 0;
    Time start_latency = 0;
  };
  void set_costs(const Costs& costs) { costs_ = costs; }
  // Where the caller posts these rings (edges, pieces, shares and costs alike) again and
  // again: the network's routes for them, found at the first post and kept in `known`
  // for the later ones (Network::KnownRingRoutes), which outlives this ring.
  void reuse_routes(Network::KnownRingRoutes* known) { known_routes_ = known; }

  void start_at(Time at);  // begins `costs.start_latency` later
  bool done() const { return done_; }
  bool idle() const { return done_ && finished_ == rings_->size(); }

  void on_event() override;
  void on_message_sent(MessageId, Time) override {}
  void on_message_delivered(MessageId id, Time now) override;
  void on_message_started(MessageId id, Time now) override;
  void on_message_finished(MessageId id, Time now) override;

 private:
  int ring_of(MessageId id) const;

  Network* network_;
  std::shared_ptr<const std::vector<Ring>> rings_;
  std::uint16_t shares_;
  std::uint8_t traffic_class_;
  std::function<void(Time)> on_done_;
  Costs costs_;
  Network::KnownRingRoutes* known_routes_ = nullptr;
  std::vector<MessageId> ids_;
  std::vector<Network::RingFlowTiming> timings_;  // per ring
  bool posted_ = false;
  std::vector<Time> started_;  // per ring: when its flow began to move (after its queue pair's turn)
  std::vector<std::int64_t> piece_wire_;  // per ring: one send's bytes on the wire
  bool done_ = false;
  std::size_t delivered_ = 0;
  std::size_t finished_ = 0;
  Time end_ = 0;  // the last rank done, once every ring is delivered
};

}  // namespace fabricsim
