#pragma once
// A packet switch: output-queued, store-and-forward. Forwarding reads a flat table,
// compiled before the run, of equal-cost egress ports per destination host, and picks
// one by flow hash (ECMP) or per packet (spraying).
#include <cstdint>
#include <vector>

#include "sim/egress_port.h"
#include "sim/packet_sink.h"
#include "sim/route_table.h"

namespace fabricsim {

class Simulator;

enum class LoadBalancing : std::uint8_t {
  kEcmp,   // hash of the flow and a per-switch salt: a flow keeps one path
  kSpray,  // a fresh choice per packet: even load, reordering at the receiver
  kAdaptive,  // per packet, the candidate with the fewest bytes waiting (ties rotate)
};

class Switch final : public PacketSink {
 public:
  Switch(Simulator& sim, std::uint64_t salt, LoadBalancing lb) : sim_(&sim), salt_(salt), lb_(lb) {}

  PortIndex add_port(EgressPort& port);
  // Routing table: for each destination host, the equal-cost egress ports. Replaces any
  // earlier table; no ports for h means h is unreachable from here.
  void set_routes(RouteTable table) { routes_ = std::move(table); }

  void receive(Packet* p, PortIndex in_port) override;

  std::size_t port_count() const { return ports_.size(); }
  EgressPort& port(PortIndex i) { return *ports_[i]; }
  std::uint64_t unroutable_drops() const { return unroutable_; }
  // The candidate ports toward `dst`, for inspection and tests.
  std::span<const PortIndex> routes_to(HostId dst) const { return routes_.to(dst); }

 private:
  PortIndex choose(const Packet& p, const PortIndex* candidates, std::uint32_t count);

  Simulator* sim_;
  std::vector<EgressPort*> ports_;
  RouteTable routes_;
  std::uint64_t salt_;
  std::uint64_t spray_counter_ = 0;  // spray's draws; adaptive's tie rotation
  std::uint64_t unroutable_ = 0;
  LoadBalancing lb_;
};

}  // namespace fabricsim
