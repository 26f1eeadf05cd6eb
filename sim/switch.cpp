#include "sim/switch.h"

#include "sim/rng.h"
#include "sim/simulator.h"

namespace fabricsim {

PortIndex Switch::add_port(EgressPort& port) {
  ports_.push_back(&port);
  return static_cast<PortIndex>(ports_.size() - 1);
}

PortIndex Switch::choose(const Packet& p, const PortIndex* candidates, std::uint32_t count) {
  if (lb_ == LoadBalancing::kAdaptive) {
    // Least bytes waiting; the scan starts one further each time, so ties rotate instead
    // of every switch herding onto its first port.
    const std::uint32_t start = static_cast<std::uint32_t>(++spray_counter_ % count);
    PortIndex best = candidates[start];
    std::int64_t least = INT64_MAX;
    for (std::uint32_t i = 0; i < count; ++i) {
      const PortIndex c = candidates[(start + i) % count];
      const EgressPort& port = *ports_[c];
      const std::int64_t load = port.queued_bytes() + (port.busy() ? 1 : 0);
      if (load < least) {
        least = load;
        best = c;
      }
    }
    return best;
  }
  std::uint64_t h;
  if (lb_ == LoadBalancing::kEcmp) {
    h = mix64(p.flow_hash ^ salt_);
  } else {
    // A counter through a mixer: deterministic, independent of other switches (so a
    // run split over partitions draws the same choices), and spread like random.
    h = mix64(salt_ + ++spray_counter_);
  }
  const auto pick = static_cast<std::uint32_t>(((h >> 32) * count) >> 32);
  return candidates[pick];
}

void Switch::receive(Packet* p, PortIndex in_port) {
  p->ingress_port = in_port;
  ++p->hops;
  const HostId dst = p->dst;
  const std::uint32_t first = routes_.offset[dst];
  const std::uint32_t count = routes_.offset[dst + 1] - first;
  const PortIndex* candidates = routes_.ports.data() + first;
  if (count == 0) {
    ++unroutable_;
    // No route: the packet dies here. Compiled routing never leaves this case.
    sim_->packets().release(p);
    return;
  }
  const PortIndex out = count == 1 ? candidates[0] : choose(*p, candidates, count);
  ports_[out]->enqueue(p);
}

}  // namespace fabricsim
