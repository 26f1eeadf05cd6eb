#include "topologies/rail_optimized.h"

#include <cmath>
#include <stdexcept>

namespace fabricsim {

double rail_oversubscription(const RailOptimizedSpec& s) {
  const double down = static_cast<double>(s.nodes) * static_cast<double>(s.nic_link.bandwidth.bits_per_second);
  const double up = static_cast<double>(s.spines) * s.links_per_pair * static_cast<double>(s.fabric_link.bandwidth.bits_per_second);
  return down / up;
}

Bandwidth rail_fabric_bandwidth_for(const RailOptimizedSpec& s, double ratio) {
  const double down = static_cast<double>(s.nodes) * static_cast<double>(s.nic_link.bandwidth.bits_per_second);
  return Bandwidth{static_cast<std::int64_t>(std::llround(down / (ratio * s.spines * s.links_per_pair)))};
}

void build_rail_optimized(Topology& t, const RailOptimizedSpec& spec, const std::vector<std::uint32_t>& endpoints,
                          const std::string& prefix) {
  if (endpoints.size() != static_cast<std::size_t>(spec.nodes) * static_cast<std::size_t>(spec.rails)) {
    throw std::invalid_argument("rail-optimized fabric needs nodes * rails endpoints");
  }
  std::vector<std::uint32_t> rails, spines;
  for (int r = 0; r < spec.rails; ++r) rails.push_back(t.add_switch(prefix + "rail" + std::to_string(r), "rail"));
  for (int s = 0; s < spec.spines; ++s) spines.push_back(t.add_switch(prefix + "spine" + std::to_string(s), "spine"));
  for (int n = 0; n < spec.nodes; ++n) {
    for (int r = 0; r < spec.rails; ++r) {
      t.connect(endpoints[static_cast<std::size_t>(n * spec.rails + r)], rails[r], spec.nic_link.bandwidth,
                spec.nic_link.latency, "nic-rail");
    }
  }
  for (std::uint32_t rail : rails) {
    for (std::uint32_t spine : spines) {
      for (int k = 0; k < spec.links_per_pair; ++k) {
        t.connect(rail, spine, spec.fabric_link.bandwidth, spec.fabric_link.latency, "rail-spine");
      }
    }
  }
}

Topology rail_optimized_topology(const RailOptimizedSpec& spec) {
  Topology t;
  std::vector<std::uint32_t> nics;
  for (int n = 0; n < spec.nodes; ++n) {
    for (int r = 0; r < spec.rails; ++r) nics.push_back(t.add_host("n" + std::to_string(n) + ".nic" + std::to_string(r), "nic"));
  }
  build_rail_optimized(t, spec, nics);
  return t;
}

}  // namespace fabricsim
