#include "topologies/torus3d.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim {

void build_torus3d(Topology& t, const Torus3dSpec& spec, const std::vector<std::uint32_t>& endpoints,
                   const std::string& prefix) {
  const auto [X, Y, Z] = spec.dims;
  if (X < 1 || Y < 1 || Z < 1) throw std::invalid_argument("torus dimensions must be at least 1");
  const std::size_t switches = static_cast<std::size_t>(X) * Y * Z;
  if (endpoints.size() > switches * static_cast<std::size_t>(spec.hosts_per_switch)) {
    throw std::invalid_argument("more endpoints than X * Y * Z * hosts_per_switch");
  }
  TorusLayout layout;
  layout.dims = spec.dims;
  std::vector<std::uint32_t> node(switches);
  for (int z = 0; z < Z; ++z) {
    for (int y = 0; y < Y; ++y) {
      for (int x = 0; x < X; ++x) {
        const std::size_t i = static_cast<std::size_t>(x + X * (y + Y * z));
        node[i] = t.add_switch(prefix + "t" + std::to_string(x) + "." + std::to_string(y) + "." + std::to_string(z), "torus");
        layout.switch_at.push_back(t.node(node[i]).kind_index);
      }
    }
  }
  layout.switch_coords.resize(t.switch_count());
  for (int z = 0; z < Z; ++z) {
    for (int y = 0; y < Y; ++y) {
      for (int x = 0; x < X; ++x) {
        layout.switch_coords[t.node(node[static_cast<std::size_t>(x + X * (y + Y * z))]).kind_index] = {x, y, z};
      }
    }
  }
  for (std::size_t e = 0; e < endpoints.size(); ++e) {
    t.connect(endpoints[e], node[e / static_cast<std::size_t>(spec.hosts_per_switch)], spec.host_link, "host");
  }
  static const char* kTier[3] = {"torus-x", "torus-y", "torus-z"};
  for (int z = 0; z < Z; ++z) {
    for (int y = 0; y < Y; ++y) {
      for (int x = 0; x < X; ++x) {
        const std::array<int, 3> c{x, y, z};
        for (int d = 0; d < 3; ++d) {
          if (spec.dims[d] < 2) continue;
          auto n = c;
          n[d] = (n[d] + 1) % spec.dims[d];
          t.connect(node[static_cast<std::size_t>(c[0] + X * (c[1] + Y * c[2]))],
                    node[static_cast<std::size_t>(n[0] + X * (n[1] + Y * n[2]))], spec.dim_links[d], kTier[d]);
        }
      }
    }
  }
  t.set_torus(std::move(layout));
  t.set_routing(RoutingScheme::kDimensionOrder);
}

Topology torus3d_topology(const Torus3dSpec& spec) {
  Topology t;
  const auto hosts = add_hosts(t, spec.dims[0] * spec.dims[1] * spec.dims[2] * spec.hosts_per_switch, "h");
  build_torus3d(t, spec, hosts);
  return t;
}

int torus_distance(const std::array<int, 3>& dims, const std::array<int, 3>& a, const std::array<int, 3>& b) {
  int hops = 0;
  for (int d = 0; d < 3; ++d) {
    const int forward = ((b[d] - a[d]) % dims[d] + dims[d]) % dims[d];
    hops += std::min(forward, dims[d] - forward);
  }
  return hops;
}

}  // namespace fabricsim
