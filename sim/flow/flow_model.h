#pragma once
// The flow-level network (network.fidelity: flow). A message is one flow over the links
// its packets would take, with a weight per link (the fraction of its bytes there: 1
// on a pinned ECMP path, less where an endpoint or a spraying switch splits it). Link
// capacity is shared max-min fairly by progressive filling, recomputed when a flow
// starts or ends, over the connected part of the flow-link graph that the change
// touches only; flows that start or end at one instant are settled together. A flow's
// data is sent once its bytes (payload and headers) have drained at its rate; it is
// delivered a path delay later (propagation plus one packet's store-and-forward at each
// hop but the bottleneck) and finished an ack's path delay after that. Where a flow's
// first link is credit-based (PCIe, NVLink, InfiniBand), the sender is done before that:
// the first link runs ahead of the flow's rate into the next buffer, up to the credit
// window (shared by its flows in proportion to their rates), so the sender's last byte
// leaves once what is left of the flow is ahead of it (`Route::window`).
//
// Not represented: queues, drops, PFC, credits, congestion-control dynamics (SimGrid's
// and ASTRA-sim's analytical backends make the same choice). docs/model.md lists when
// that matters.
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "sim/core/event_queue.h"
#include "sim/message.h"
#include "sim/core/time.h"

namespace fabricsim {

class Simulator;

class FlowModel final : public EventHandler {
 public:
  struct Hop {
    std::uint32_t link;  // a direction of a cable (Network::directions() index)
    double weight;       // the fraction of the flow's bytes that cross it, in (0, 1]
  };
  static constexpr std::uint32_t kNoSum = UINT32_MAX;
  static constexpr std::uint64_t kNoTurn = UINT64_MAX;
  // Turns of an RDMA queue pair (GPU pair and connection) rather than of a sender's links: bit 63.
  static constexpr std::uint64_t kQueuePairTurn = std::uint64_t{1} << 63;
  static constexpr bool queue_pair_turn(std::uint64_t t) { return t != kNoTurn && (t & kQueuePairTurn) != 0; }
  struct Route {
    std::vector<Hop> hops;  // each link once
    Time deliver_delay = 0;  // last byte through the bottleneck -> last byte at the destination
    // A ring's (FlowRouter::ring_route): its edges' own deliver delays, averaged. A step of
    // the ring waits for its predecessor's chunk, and step by step its predecessors go
    // round the ring, so over the ring's steps the delays paid are the edges' in turn
    // (Network::RingFlowTiming).
    Time mean_edge_delay = 0;
    Time ack_delay = 0;      // delivered -> the last ack back at the source
    // In-network transfers are not acknowledged: done once sent. They deliver these
    // receive records instead of their own (a multicast: every member's), or, as one
    // contribution of `sum_parts` to sum `sum`, once the last contribution is in.
    bool acknowledged = true;
    std::vector<MessageId> deliver;
    std::uint32_t sum = kNoSum;
    std::uint32_t sum_parts = 0;
    // A credit-based first link (the sender's widest): the credit it grants, in bytes.
    std::uint32_t window_link = UINT32_MAX;
    double window = 0;
    // In-network transfers of one sender (NVLS) are striped a packet per link over all its
    // links, and its NIC takes turns over them: a round-robin whose quantum is one packet
    // per link. A flow's body shares fairly; its last quantum (`turn_bytes`) waits its turn
    // among the sender's (`in_turn`) and goes in posting order.
    std::uint64_t in_turn = kNoTurn;
    std::int64_t turn_bytes = 0;
    // The sender's program is told the message is sent as it starts (a GPU posting to its
    // RDMA NIC goes on; the NIC sends).
    bool posted = false;
    // The sender is told when the flow begins to move (after its turn): a coupled ring's
    // chain of steps starts then.
    bool tells_start = false;
    // It stands for this many equal flows on the same links (max-min gives each the same
    // share; together they load each link `shares` times as much).
    std::uint32_t shares = 1;
    // Its sender's own limit, per share, in bytes per picosecond (0: none;
    // Message::rate_cap_bps): a private link only this flow crosses.
    double cap = 0;
    // Set by prepare(): `hops` are weighted by the shares and bundled already, as of
    // `prepared_at` bundles dissolved (link_bundles_dissolved()); `raw_hops` (which must
    // outlive the route) are what they were made from, taken again once another has.
    const std::vector<Hop>* raw_hops = nullptr;
    std::size_t prepared_at = 0;
  };
  // `capacity`: each link's rate in bytes per picosecond. `observer` hears of every
  // flow's sending, delivery and completion (the network's dispatcher).
  FlowModel(Simulator& sim, std::vector<double> capacity, MessageObserver* observer);

  // Rates are worked out again at every start and end (0, exact), or at most once per
  // `interval`, on its multiples: changes wait for the next one (a new flow starts then;
  // capacity a flow leaves stays unused until then). Large runs trade that error,
  // at most an interval per change, for solves that no longer follow every flow.
  void set_rate_interval(Time interval) { interval_ = interval; }
  Time rate_interval() const { return interval_; }

  // For a route started again and again (a coupled ring's): sets `route.hops` to `raw`
  // weighted by its shares and bundled, as every start would make them, so its starts
  // skip that while no bundle dissolves. False (the route unchanged) where `raw` would
  // dissolve a bundle: that happens as the flow starts.
  bool prepare(Route& route, const std::vector<Hop>& raw);
  // Starts message `id` now: `wire_bytes` (payload and headers) over `route`.
  void start(MessageId id, std::int64_t wire_bytes, std::int64_t payload, const Route& route);
  // The same, keeping `route` without a copy where the flow waits for its turn.
  void start(MessageId id, std::int64_t wire_bytes, std::int64_t payload, Route&& route);

  void on_event() override;

  // Groups of links that flows cross together, each link in proportion to its capacity (a
  // GPU's links to the NVSwitch chips of its node; FlowRouter::parallel_link_groups): a
  // flow that crosses all of a group's links so carries one hop on the group's own
  // constraint (its capacity the links' sum) instead of one per link. With weights in
  // proportion to the capacities the links' constraints are one and the same, so the
  // rates are the per-link ones (up to rounding). The first flow that crosses a group
  // otherwise (a dead NVLink skews its sender's split) dissolves it: the flows on it go
  // back to the links. Counters stay per link. Before any flow starts.
  void set_link_bundles(const std::vector<std::vector<std::uint32_t>>& groups);
  std::size_t link_bundles() const { return bundles_.size(); }
  std::size_t link_bundles_dissolved() const { return dissolutions_; }

  std::size_t link_count() const { return real_links_; }
  // Bytes carried by `link` up to `now` (the rates settled last are integrated up to it).
  double link_bytes(std::uint32_t link, Time now) const;
  std::uint64_t link_flows(std::uint32_t link) const {
    const std::uint32_t b = link < bundle_of_.size() ? bundle_of_[link] : kNoBundle;
    return link_flows_[link].flows + (b == kNoBundle ? 0 : link_flows_[bundles_[b].link].flows);
  }
  double link_capacity(std::uint32_t link) const { return links_[link].capacity; }
  std::uint64_t flows_started() const { return started_; }
  std::uint64_t flows_finished() const { return finished_; }
  std::uint64_t payload_delivered() const { return payload_delivered_; }
  std::uint64_t rate_solves() const { return solves_; }        // max-min recomputations
  std::uint64_t flows_solved() const { return flows_solved_; }  // flows they covered, in all
  std::size_t max_active_flows() const { return max_active_; }
  std::size_t active_flows() const { return active_; }

 private:
  // Its first cache line holds what a solve reads of every flow it takes in (rate, shares,
  // cap, hops, bottleneck, stamp), its flags next, the rest after them: at thousands of
  // flows a solve is bound by their misses.
  struct alignas(64) FlowState {
    double rate = 0;           // bytes per picosecond
    double next_rate = 0;      // solve()'s scratch: the rate being worked out
    double shares = 1;         // equal flows it stands for
    double cap = 0;            // Route::cap
    std::vector<Hop> hops;
    std::uint32_t bottleneck = UINT32_MAX;  // the link that froze it in the last solve
    std::uint32_t visit = 0;   // solve stamp
    bool frozen = false;
    bool sent = false;  // the sender's last byte has left (told)
    bool body = false;  // a flow's body: silent; once sent, its last quantum takes its turn
    bool posted = false;  // its sending was told as it started
    bool acknowledged = true;
    std::uint32_t heap_pos = UINT32_MAX;
    MessageId id = 0;
    std::uint64_t serial = 0;  // start order: breaks ties between equal finish times
    double remaining = 0;      // bytes left at `last`
    Time last = 0;
    Time finish = kTimeMax;
    Time deliver_delay = 0;
    Time ack_delay = 0;
    std::int64_t payload = 0;
    std::uint32_t sum = kNoSum;
    std::uint32_t sum_parts = 0;
    // Running ahead on a credit-based first link (see the top): bytes beyond those
    // drained at `last`, at most `ahead_cap`, growing at `push - rate` until then.
    std::uint32_t window_link = UINT32_MAX;
    double window = 0;
    double ahead = 0;
    double ahead_cap = 0;
    double push = 0;
    std::uint64_t in_turn = kNoTurn;
    std::int64_t tail_wire = 0;
    std::int64_t tail_payload = 0;
    std::vector<MessageId> deliver;
    std::vector<std::uint32_t> member_pos;  // per hop: its place in the link's member list
  };
  struct Member {
    std::uint32_t flow;
    std::uint32_t hop;
  };
  // What a solve's passes over its links read: one cache line.
  struct alignas(64) LinkState {
    double capacity = 0;
    double load = 0;        // bytes per ps, the sum of weight x rate over its flows
    // Progressive filling's scratch.
    double residual = 0;
    double weight_left = 0;  // the weights of its flows not yet frozen
    Time load_since = 0;    // `bytes` holds what was carried up to here
    double bytes = 0;
    std::uint32_t visit = 0;
    // Flows whose bottleneck is this link (perhaps some that left it since): where none
    // is, take_in_held() has nothing to take in, and does not read the members.
    std::uint32_t held = 0;
    std::uint32_t window_users = 0;  // active flows whose credit window is on this link
    bool dirty = false;
  };
  static_assert(sizeof(LinkState) == 64);
  // A link's flows, beside its state (read where a link freezes flows or flows join and
  // leave it, not by every pass of a solve).
  struct LinkFlows {
    std::vector<Member> members;
    std::uint64_t flows = 0;  // flows that crossed it, in all
  };
  struct Note {  // something to tell the observer at `time`
    Time time;
    std::uint64_t seq;
    MessageId id;
    std::uint8_t kind;  // 0 sent, 1 delivered, 2 finished, 3 started
    std::int64_t payload;
  };
  struct NoteLater {
    bool operator()(const Note& a, const Note& b) const { return a.time != b.time ? a.time > b.time : a.seq > b.seq; }
  };

  struct SumState {
    std::uint32_t left = 0;  // contributions still to finish
    Time delay = 0;
    std::int64_t payload = 0;
    std::vector<MessageId> deliver;
  };
  // A group of set_link_bundles: its links (each one's share of the capacity is in
  // bundle_share_) and the flow-model link that stands for them (after the real ones)
  // until dissolved.
  struct Bundle {
    std::vector<std::uint32_t> members;
    std::uint32_t link = 0;
    bool dissolved = false;
  };
  static constexpr std::uint32_t kNoBundle = UINT32_MAX;
  // The live bundle `link` belongs to, if any.
  std::uint32_t live_bundle(std::uint32_t link) const {
    if (link >= bundle_of_.size()) return kNoBundle;
    const std::uint32_t b = bundle_of_[link];
    return b != kNoBundle && !bundles_[b].dissolved ? b : kNoBundle;
  }
  // Replaces each live bundle's links in `hops` by its own link where the hops cross all
  // of them in proportion, and dissolves a bundle they cross otherwise (or, where it may
  // not, returns false and leaves `hops` as they were).
  bool bundle_hops(std::vector<Hop>& hops, bool may_dissolve);
  // A starting flow's hops: each weight times its shares, then bundled (false, as
  // bundle_hops, where a bundle would dissolve and may not).
  bool weigh_and_bundle(std::vector<Hop>& hops, std::uint32_t shares, bool may_dissolve);
  void dissolve(std::uint32_t b);
  // The link whose load paces a flow's credit window: its window link's bundle while live.
  std::uint32_t window_constraint(const FlowState& s) const {
    if (s.window_link == UINT32_MAX) return UINT32_MAX;
    const std::uint32_t b = live_bundle(s.window_link);
    return b == kNoBundle ? s.window_link : bundles_[b].link;
  }
  void note(Time at, MessageId id, std::uint8_t kind, std::int64_t payload);
  void wake_now();
  // The first time from `t` on at which rates may be solved.
  Time solve_time(Time t) const { return interval_ <= 0 || t % interval_ == 0 ? t : (t / interval_ + 1) * interval_; }
  void complete_due(Time now);
  void remove_from_links(std::uint32_t f);
  void solve(Time now);
  // solve()'s parts: take a flow into the part being solved; take in the flows whose
  // bottleneck is a link reached so far (every flow there: `every_link`); progressive filling over that part (into next_rate);
  // flows outside it that a bottleneck of the filling would have to slow down, taken in.
  void take_in(std::uint32_t f);
  void take_in_held(bool every_link);
  void fill();
  // A flow alone on every one of its links (a TP ring inside a node): its rate worked out
  // from its own links, frozen, without the shared heap. False where it is not alone.
  bool fill_alone(FlowState& s, std::uint32_t f);
  // Fixes a flow's rate at `share` per share, held by `bottleneck` (a link, or kCapped).
  void freeze(FlowState& s, double share, std::uint32_t bottleneck);
  // Sets s.bottleneck, keeping the links' `held` counts.
  void set_bottleneck(FlowState& s, std::uint32_t link);
  bool take_in_faster();
  // Folds the rates a flow had up to `now` into its remaining bytes and lead.
  void advance(FlowState& s, Time now);
  // A flow's load on one of its links at its rate: its weight there is every share's.
  static double contribution(const FlowState& s, const Hop& h) { return h.weight * s.rate / s.shares; }
  // When the flow's sender is done (its remaining bytes all ahead of it), from `now`
  // on at the rates just solved; sets how fast and how far it runs ahead until then.
  Time plan_sending(FlowState& s, Time now);
  // The completion heap over active flows, by (finish, serial).
  bool earlier(std::uint32_t a, std::uint32_t b) const;
  void heap_update(std::uint32_t f);
  void heap_remove(std::uint32_t f);
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  void heap_place(std::size_t i, std::uint32_t f);

  Simulator* sim_;
  MessageObserver* observer_;
  std::vector<LinkState> links_;  // the real ones (link_count()), then the bundles'
  std::vector<LinkFlows> link_flows_;  // likewise
  std::size_t real_links_ = 0;
  std::vector<Bundle> bundles_;
  std::size_t dissolutions_ = 0;  // bundles dissolved so far
  std::vector<std::uint32_t> bundle_of_;  // per real link: its bundle (kNoBundle: none)
  std::vector<double> bundle_share_;      // per real link: its capacity over its bundle's
  struct BundleUse {  // bundle_hops' scratch: one bundle's hops in a route
    std::uint32_t bundle;
    std::uint32_t hops;
    double weight;
    double ratio;  // weight over share, the same for every hop of a proportional route
    bool proportional;
  };
  std::vector<BundleUse> bundle_uses_;
  // Per bundle: its place in bundle_uses_ while bundle_hops runs (kNoUse otherwise), so a
  // route over many bundles (a ring's) is bundled in time linear in its hops.
  static constexpr std::uint32_t kNoUse = UINT32_MAX;
  std::vector<std::uint32_t> bundle_use_of_;
  std::vector<Hop> bundled_hops_;
  std::vector<FlowState> flows_;
  std::vector<std::uint32_t> free_flows_;
  std::vector<std::uint32_t> heap_;
  std::vector<Note> notes_;  // a heap by (time, seq)
  struct Waiting {
    MessageId id;
    std::int64_t wire_bytes;
    std::int64_t payload;
    Route route;
  };
  struct Turns {
    bool busy = false;
    std::deque<Waiting> waiting;
  };
  std::unordered_map<std::uint64_t, Turns> turns_;  // by Route::in_turn
  std::vector<std::uint64_t> turn_over_;            // senders whose turn just ended
  std::vector<Waiting> tails_due_;                  // last quanta whose bodies were just sent
  std::unordered_map<MessageId, Route> body_routes_;  // bodies' routes, for their tails
  void start_now(MessageId id, std::int64_t wire_bytes, std::int64_t payload, const Route& route, bool body);
  void take_turn(Waiting&& w);
  void pass_turns();
  std::vector<std::uint32_t> dirty_links_;
  std::vector<std::uint32_t> new_flows_;  // started since the last solve
  std::unordered_map<std::uint32_t, SumState> sums_;  // sums with contributions in flight
  std::uint64_t next_serial_ = 0;
  std::uint64_t next_note_ = 0;
  std::uint32_t stamp_ = 0;
  bool in_event_ = false;
  Time interval_ = 0;
  std::size_t active_ = 0;
  std::size_t max_active_ = 0;
  std::uint64_t started_ = 0;
  std::uint64_t finished_ = 0;
  std::uint64_t payload_delivered_ = 0;
  std::uint64_t solves_ = 0;
  std::uint64_t flows_solved_ = 0;
  // Scratch of solve(), kept to avoid reallocating.
  std::vector<std::uint32_t> comp_links_;
  std::vector<std::uint32_t> comp_flows_;
  std::size_t scanned_ = 0;                // comp_links_ checked for saturation
  struct Share {
    double share;
    std::uint32_t link;  // or kCapped + a flow: that flow's own cap
  };
  // Above every link number: a share entry for a flow's cap, and the bottleneck of a flow
  // its cap holds.
  static constexpr std::uint32_t kCapped = UINT32_C(1) << 31;
  std::vector<Share> shares_;
  std::vector<Share> bottlenecks_;  // links that froze flows in the last filling, at that share
};

}  // namespace fabricsim
