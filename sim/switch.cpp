#include "sim/switch.h"

#include "sim/rng.h"
#include "sim/simulator.h"

namespace fabricsim {

PortIndex Switch::add_port(EgressPort& port) {
  ports_.push_back(&port);
  return static_cast<PortIndex>(ports_.size() - 1);
}

void Switch::set_routes(const std::vector<std::vector<PortIndex>>& per_host) {
  route_offset_.assign(per_host.size() + 1, 0);
  route_ports_.clear();
  for (std::size_t h = 0; h < per_host.size(); ++h) {
    route_offset_[h] = static_cast<std::uint32_t>(route_ports_.size());
    route_ports_.insert(route_ports_.end(), per_host[h].begin(), per_host[h].end());
  }
  route_offset_[per_host.size()] = static_cast<std::uint32_t>(route_ports_.size());
}

std::vector<PortIndex> Switch::routes_to(HostId dst) const {
  if (dst + 1 >= route_offset_.size()) return {};
  return {route_ports_.begin() + route_offset_[dst], route_ports_.begin() + route_offset_[dst + 1]};
}

PortIndex Switch::choose(const Packet& p, std::uint32_t first, std::uint32_t count) {
  std::uint64_t h;
  if (lb_ == LoadBalancing::kEcmp) {
    h = mix64(p.flow_hash ^ salt_);
  } else {
    // A counter through a mixer: deterministic, independent of other switches (so a
    // run split over partitions draws the same choices), and spread like random.
    h = mix64(salt_ + ++spray_counter_);
  }
  const auto pick = static_cast<std::uint32_t>(((h >> 32) * count) >> 32);
  return route_ports_[first + pick];
}

void Switch::receive(Packet* p, PortIndex in_port) {
  p->ingress_port = in_port;
  ++p->hops;
  const HostId dst = p->dst;
  const std::uint32_t first = route_offset_[dst];
  const std::uint32_t count = route_offset_[dst + 1] - first;
  if (count == 0) {
    ++unroutable_;
    // No route: the packet dies here. Compiled routing never leaves this case.
    sim_->packets().release(p);
    return;
  }
  const PortIndex out = count == 1 ? route_ports_[first] : choose(*p, first, count);
  ports_[out]->enqueue(p);
}

}  // namespace fabricsim
