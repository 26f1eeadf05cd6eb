// The endpoint's routes (set before the run): which of its ports lie on a shortest path
// to each destination, as a bit mask per candidate set of the table.
#include "sim/endpoint/nic.h"

namespace fabricsim {

void Nic::set_routes(RouteTable table, const std::vector<std::uint32_t>* host_group) {
  routes_ = std::move(table);
  host_group_ = host_group;
  set_mask_.assign(routes_.set_count(), 0);
  for (std::uint32_t s = 0; s < routes_.set_count(); ++s) {
    for (PortIndex p : routes_.set(s)) set_mask_[s] |= std::uint64_t{1} << p;
  }
  // The common endpoint, one port to one switch: the table says port 0 for every other
  // host and nothing for this one. Then asking it costs three lines of this endpoint's
  // that no packet needs, so it is not asked.
  via_port0_ = all_but_self_via_port0();
  have_routes_ = !via_port0_;
}

bool Nic::all_but_self_via_port0() const {
  const auto port0 = [&](std::uint32_t s) { return s < set_mask_.size() && set_mask_[s] == 1; };
  if (routes_.by_group.empty()) {
    if (!port0(routes_.default_set)) return false;
  } else {
    for (const std::uint32_t s : routes_.by_group) {
      if (!port0(s)) return false;
    }
  }
  // Per-host exceptions: this host's own must say no port (or every group's entry, port
  // 0, would answer for it); any other's port 0.
  bool self_seen = false;
  for (std::size_t i = 0; i < routes_.by_host.size(); ++i) {
    const HostId h = routes_.first_host + static_cast<HostId>(i);
    const std::uint32_t s = routes_.by_host[i];
    if (h == host_) {
      if (s == RouteTable::kNoException || s >= set_mask_.size() || set_mask_[s] != 0) return false;
      self_seen = true;
    } else if (s != RouteTable::kNoException && !port0(s)) {
      return false;
    }
  }
  return self_seen;
}

}  // namespace fabricsim
