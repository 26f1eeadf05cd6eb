#include "topologies/compile.h"

#include <cstdlib>
#include <stdexcept>

#include "sim/core/units.h"

namespace fabricsim {

std::string check_topology(const Topology& t) {
  std::vector<std::size_t> host_links(t.host_count(), 0);
  for (const TopologyLink& l : t.links()) {
    for (std::uint32_t end : {l.a, l.b}) {
      if (t.node(end).kind == NodeKind::kHost) ++host_links[t.node(end).kind_index];
    }
    if (l.bandwidth.bits_per_second <= 0) return "a link needs a positive bandwidth";
    if (l.latency < ns(1)) {
      return "link " + t.node(l.a).name + " - " + t.node(l.b).name + ": expected a latency of at least 1ns (every link's latency is the lookahead of a parallel run), got " +
             format_time(l.latency);
    }
  }
  if (t.host_count() < 2) return "a topology needs at least two endpoints";
  for (std::uint32_t h = 0; h < t.host_count(); ++h) {
    const std::string& name = t.node(t.host_node(h)).name;
    if (host_links[h] == 0) return "endpoint '" + name + "' has no link";
    if (host_links[h] > Nic::kMaxPorts) return "endpoint '" + name + "' has more than 64 links";
  }
  return {};
}

std::int64_t credit_bytes_for(const TopologyLink& l, const NicConfig& nic) {
  if (l.credit_bytes > 0) return l.credit_bytes;
  // Line rate needs the credit loop's round trip (the packet's trip there, the credit's
  // trip back) covered, plus packets in serialization at either end.
  const double round_trip_bytes = static_cast<double>(l.bandwidth.bits_per_second) / 8 * to_seconds(2 * l.latency);
  return static_cast<std::int64_t>(round_trip_bytes) + 8 * (static_cast<std::int64_t>(nic.mtu) + nic.header_bytes);
}

std::unique_ptr<Network> compile_network(const Topology& t, Simulator& sim, const NetworkOptions& options,
                                         const RoutingProgress& progress) {
  if (std::string problem = check_topology(t); !problem.empty()) throw std::invalid_argument(problem);
  Routes routes = compute_routes(t, progress, options.route_threads);
  // Every endpoint must reach every other: a fabric in pieces is a config mistake.
  if (!routes.unreachable.empty()) throw std::invalid_argument(routes.unreachable);

  auto net = std::make_unique<Network>(sim, options.params);
  if (!options.partitions.empty()) {
    std::vector<std::uint32_t> hosts(t.host_count()), switches(t.switch_count());
    for (std::uint32_t h = 0; h < t.host_count(); ++h) hosts[h] = options.node_partition.at(t.host_node(h));
    for (std::uint32_t s = 0; s < t.switch_count(); ++s) switches[s] = options.node_partition.at(t.switch_node(s));
    net->set_partitions(options.partitions, std::move(hosts), std::move(switches));
  }
  for (std::size_t h = 0; h < t.host_count(); ++h) net->add_host();
  for (std::size_t s = 0; s < t.switch_count(); ++s) net->add_switch();
  if (options.rdma_nics) {
    for (std::uint32_t s = 0; s < t.switch_count(); ++s) {
      if (t.node(t.switch_node(s)).role == "nic") net->make_rdma_nic(s);
    }
  }
  const auto ref = [&](std::uint32_t node) {
    const TopologyNode& n = t.node(node);
    if (n.kind == NodeKind::kHost) return NodeRef::host(n.kind_index);
    return net->is_rdma_nic(n.kind_index) ? NodeRef::nic(n.kind_index) : NodeRef::sw(n.kind_index);
  };
  // Each switch's ports side by side (see sim/net/port_block.h): its links, and its reduction
  // engine's loop.
  {
    std::vector<std::size_t> degree(t.switch_count(), 0);
    for (const TopologyLink& l : t.links()) {
      for (std::uint32_t end : {l.a, l.b}) {
        if (t.node(end).kind != NodeKind::kHost) ++degree[t.node(end).kind_index];
      }
    }
    for (std::uint32_t s = 0; s < t.switch_count(); ++s) {
      if (t.node(t.switch_node(s)).reduce_rate.bits_per_second > 0) ++degree[s];
      if (!net->is_rdma_nic(s)) net->reserve_switch_ports(s, degree[s]);
    }
  }
  // With a shared buffer the switch admits at ingress; its egress queues never tail-drop.
  const std::int64_t capacity =
      options.params.shared_buffer ? EgressPort::kUnlimited : options.switch_queue_capacity_bytes;
  const TorusLayout* torus = options.dateline && t.torus() ? &*t.torus() : nullptr;
  for (const TopologyLink& l : t.links()) {
    const bool credit = l.flow_control == FlowControl::kCredit;
    const auto [ab, ba] = net->connect(ref(l.a), ref(l.b), l.bandwidth, l.latency, credit ? EgressPort::kUnlimited : capacity,
                                       credit ? credit_bytes_for(l, options.params.nic) : 0);
    const int dim = l.tier == "torus-x" ? 0 : l.tier == "torus-y" ? 1 : l.tier == "torus-z" ? 2 : -1;
    if (torus != nullptr && dim >= 0) {
      // The wraparound link of a ring is its dateline, in both directions.
      const auto& ca = torus->switch_coords[t.node(l.a).kind_index];
      const auto& cb = torus->switch_coords[t.node(l.b).kind_index];
      const int k = torus->dims[static_cast<std::size_t>(dim)];
      const bool wrap = k > 2 && std::abs(ca[static_cast<std::size_t>(dim)] - cb[static_cast<std::size_t>(dim)]) == k - 1;
      for (std::size_t di : {ab, ba}) {
        const LinkDirection& d = net->directions()[di];
        net->switch_at(d.from.index).set_torus_port(d.from_port, static_cast<std::uint8_t>(dim), wrap);
      }
    }
  }
  for (std::uint32_t s = 0; s < t.switch_count(); ++s) {
    const Bandwidth rate = t.node(t.switch_node(s)).reduce_rate;
    if (rate.bits_per_second > 0) net->add_reduction_engine(s, rate);
  }
  net->finish_switches();
  net->set_host_groups(std::move(routes.host_group));
  for (std::uint32_t h = 0; h < t.host_count(); ++h) net->nic(h).set_routes(std::move(routes.tables[t.host_node(h)]), &net->host_groups());
  for (std::uint32_t s = 0; s < t.switch_count(); ++s) {
    if (net->is_rdma_nic(s)) {
      net->rdma_nic(s).set_routes(std::move(routes.tables[t.switch_node(s)]), &net->host_groups());
    } else {
      net->switch_at(s).set_routes(std::move(routes.tables[t.switch_node(s)]));
    }
  }
  return net;
}

const std::string& node_name(const Topology& t, NodeRef n) {
  return t.node(n.kind == NodeRef::Kind::kHost ? t.host_node(n.index) : t.switch_node(n.index)).name;
}

}  // namespace fabricsim
