#pragma once
// A packet switch: output-queued, store-and-forward. Forwarding reads a flat table,
// compiled before the run, of equal-cost egress ports per destination host, and picks
// one by flow hash (ECMP), per packet (spraying) or by least queue (adaptive). With a
// shared buffer, packets are admitted at ingress by the MMU, which also drives PFC.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sim/core/counter_fields.h"
#include "sim/net/egress_port.h"
#include "sim/net/packet_sink.h"
#include "sim/net/reduction_table.h"
#include "sim/core/rng.h"
#include "sim/net/route_table.h"
#include "sim/net/shared_buffer_mmu.h"

namespace fabricsim {

class Simulator;

enum class LoadBalancing : std::uint8_t {
  kEcmp,   // hash of the flow and a per-switch salt: a flow keeps one path
  kSpray,  // a fresh choice per packet: even load, reordering at the receiver
  kAdaptive,  // per packet, the candidate with the fewest bytes waiting (ties rotate)
};

struct SwitchCounters {
  std::uint64_t buffer_drops = 0;   // refused by the shared buffer
  std::uint64_t unroutable = 0;
  std::uint64_t packets_reduced = 0;     // sums sent on (each from `group` contributions)
  std::uint64_t packets_replicated = 0;  // multicast copies made
  std::int64_t max_buffer_bytes = 0;

  template <typename F, typename... C>
  static void for_each_field(F&& f, C&... c) {
    f(CounterField{"buffer_drops"}, c.buffer_drops...);
    f(CounterField{"unroutable"}, c.unroutable...);
    f(CounterField{"packets_reduced"}, c.packets_reduced...);
    f(CounterField{"packets_replicated"}, c.packets_replicated...);
    f(CounterField{"max_buffer_bytes", /*is_max=*/true}, c.max_buffer_bytes...);
  }
};

// A member of a multicast group, as the switch addresses it.
struct MulticastMember {
  HostId host;
  std::uint32_t group;  // its routing group
};

class Switch final : public PacketSink, public PortObserver {
 public:
  static constexpr std::uint8_t kNoDimension = 0xff;
  static constexpr PortIndex kNoPort = 0xffff;  // a packet the switch made (a multicast copy)

  Switch(Simulator& sim, std::uint64_t salt, LoadBalancing lb) : sim_(&sim), salt_(salt), lb_(lb), rng_(salt) {}

  PortIndex add_port(EgressPort& port);
  // Routing table: per destination group (and per host near this switch), the equal-cost
  // egress ports. Replaces any earlier table; no ports means unreachable from here.
  void set_routes(RouteTable table) { routes_ = std::move(table); }
  // Switches to shared-buffer admission (after all ports are added).
  void set_buffer(std::unique_ptr<SharedBufferMmu> mmu) {
    if (mmu) {
      mmu_.emplace(std::move(*mmu));
    } else {
      mmu_.reset();
    }
  }
  void set_ecn(const EcnConfig& ecn, const std::vector<EcnForSpeed>& by_speed = {});
  // Notes which ports are on credit-based links (after their credits are set).
  void find_credit_ports();
  // Dateline virtual channels on a torus: port `port` runs along `dimension`; a packet
  // entering a dimension travels in class 0 and moves to class 1 once it crosses the
  // dimension's dateline (the wraparound link), which breaks the ring's buffer cycle.
  void set_torus_port(PortIndex port, std::uint8_t dimension, bool dateline);
  // In-switch reduction (NVLink SHARP): sums leave through `port`, whose link loops back
  // into this switch at the reduction rate, and are forwarded from there.
  void set_reduction_engine(PortIndex port) { engine_port_ = port; }
  bool reduces() const { return engine_port_ != kNoPort; }
  PortIndex engine_port() const { return engine_port_; }
  // Multicast group `id` (set before the run, as a multicast object is): copies of a
  // kMulticast packet go to every member.
  void add_multicast_group(std::uint16_t id, std::vector<MulticastMember> members);
  bool has_multicast_group(std::uint16_t id) const { return id < multicast_.size() && !multicast_[id].empty(); }

  void receive(Packet* p, PortIndex in_port) override;
  void on_departure(const Departure& d) override;
  void prefetch_arrival(const Packet& p, PortIndex in_port) const override;
  void prefetch_arrival_more(const Packet& p, PortIndex in_port) const override;
  void prefetch_departure(const Departure& d) const override;

  // Which of `count` equal-cost candidates ECMP gives a flow of hash `flow_hash` here.
  std::uint32_t ecmp_pick(std::uint32_t flow_hash, std::uint32_t count) const {
    const std::uint64_t h = mix64(flow_hash ^ salt_);
    return static_cast<std::uint32_t>(((h >> 32) * count) >> 32);
  }
  LoadBalancing load_balancing() const { return lb_; }

  std::size_t port_count() const { return ports_.size(); }
  // Side by side (Network::reserve_switch_ports), port i is at a fixed stride from the
  // first: no load of the pointer list, whose lines a cold switch would have to fetch.
  EgressPort& port(PortIndex i) { return ports_side_by_side_ ? first_port_[i] : *ports_[i]; }
  const EgressPort& port(PortIndex i) const { return ports_side_by_side_ ? first_port_[i] : *ports_[i]; }
  const SharedBufferMmu* buffer() const { return mmu_ ? &*mmu_ : nullptr; }
  const SwitchCounters& counters() const { return counters_; }
  // A run split over processes: those that did not run it take its runner's counters.
  void adopt_counters(const SwitchCounters& c) { counters_ = c; }
  const RouteTable& routes() const { return routes_; }

 private:
  bool credit_port(PortIndex i) const {
    return any_credit_ports_ && ((credit_ports_[i / 64] >> (i % 64)) & 1u);
  }
  PortIndex choose(const Packet& p, const PortIndex* candidates, std::uint32_t count);
  // `in_port` holds its buffer (kNoPort: a copy made here); `arrived_by` is the port it
  // came in by (a copy's original's).
  void forward(Packet* p, PortIndex in_port, PortIndex arrived_by);
  void forward(Packet* p, PortIndex in_port) { forward(p, in_port, in_port); }
  // A kReduce or kMulticast packet where this switch acts on it; false: forward it.
  bool in_network(Packet* p, PortIndex in_port);
  void send_pfc(PortIndex to, std::uint8_t traffic_class, bool xoff);

  // What a packet's forwarding and departure read comes first, in the six lines the
  // link's prefetch asks for (see Link::prefetch); setup-only fields (ECN settings, which
  // ports point into) last.
  Simulator* sim_;
  std::uint64_t salt_;
  LoadBalancing lb_;
  bool any_credit_ports_ = false;
  bool ports_side_by_side_ = false;  // every port at first_port_ + its index
  PortIndex engine_port_ = kNoPort;
  EgressPort* first_port_ = nullptr;
  std::optional<SharedBufferMmu> mmu_;  // inline: its counters' address is one load away
  std::vector<EgressPort*> ports_;
  RouteTable routes_;
  std::vector<std::uint8_t> port_dimension_;  // empty unless on a torus with datelines
  SwitchCounters counters_;
  std::vector<std::uint64_t> credit_ports_;  // bit i: port i's link is credit-based
  std::vector<std::uint8_t> port_dateline_;
  std::uint64_t spray_counter_ = 0;  // spray's draws; adaptive's tie rotation
  ReductionTable sums_;
  std::vector<std::vector<MulticastMember>> multicast_;  // by group id
  Rng rng_;                          // ECN marking
  EcnConfig ecn_;
  std::vector<EcnForSpeed> ecn_by_speed_;
};

}  // namespace fabricsim
