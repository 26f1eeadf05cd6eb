#pragma once
// Where a message's bytes go in the flow model: the links its packets would cross, read
// from the compiled network's own forwarding tables, so both fidelities route alike.
// An endpoint with several ports toward the destination spreads a message over them in
// proportion to their bandwidth (as its packets round-robin over free ports); a switch
// gives the whole flow to the port ECMP hashes it to, or splits it evenly over the
// candidates when it sprays or adapts per packet. A flow's acknowledgements load the
// links back in proportion to its rate (ack bytes per data packet), as packets' do.
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/flow/flow_model.h"
#include "sim/network.h"

namespace fabricsim {

class FlowRouter {
 public:
  explicit FlowRouter(const Network& net);

  // Each link direction's rate in bytes per picosecond (Network::directions() order),
  // then each reduction engine's.
  std::vector<double> capacities() const;
  // The route of message `m` (a unicast one).
  FlowModel::Route route(const Message& m) const;
  // One flow over a ring's edges (sender, successor), each routed as a send of `chunk`
  // bytes of message `m` from that sender would be: every edge's links (a link that
  // several edges cross, once with their weights summed), the slowest edge's delays.
  // Through RDMA NICs it takes turns on its first edge's queue pair. `edge_hops` (if
  // given): each edge's own links.
  FlowModel::Route ring_route(const Message& m, const std::vector<std::pair<HostId, HostId>>& edges, std::int64_t chunk,
                              std::vector<std::vector<FlowModel::Hop>>* edge_hops = nullptr) const;
  // Links every flow crosses together in proportion to their bandwidth, as groups for
  // FlowModel::set_link_bundles: per endpoint, its links to switches that reach the same
  // endpoints and nothing else (the NVSwitch chips of its node), and, as a second group,
  // those switches' links back to it. (A flow that turns out not to keep the proportion
  // dissolves its group; the flow model checks each.)
  std::vector<std::vector<std::uint32_t>> parallel_link_groups() const;
  // RDMA NICs (nic_model: rdma), whose network the flow model routes as relays: per
  // host, its port to its NIC (-1: none). A message leaving by it is delivered later by
  // the work request's and the read's PCIe trips and the completion behind the last
  // write, and finished from the destination NIC's ack (docs/model.md).
  void set_rdma_nic_ports(std::vector<int> port_of_host) { rdma_port_ = std::move(port_of_host); }
  // The flow model's turn key for the RDMA queue pair `m` travels on.
  static std::uint64_t queue_pair_turn(const Message& m);

 private:
  struct Reach {  // part of the flow at a node, one hop count from the source
    NodeRef node;
    double weight;
    Time delay;          // propagation plus a full packet's serialization, per hop so far
    std::int64_t slowest;  // the least bandwidth so far, bits per second (0: none yet)
  };
  struct Walk {
    Time delay = 0;      // the slowest part's propagation and per-hop serialization of `packet`
    std::int64_t slowest_bps = 0;  // that part's least bandwidth
  };
  // Adds to `hops` the links from `from` to `to` of a packet stream hashed `hash`, each
  // with `scale` times the fraction that crosses it.
  Walk walk(NodeRef from, HostId to, std::uint32_t hash, std::int64_t packet, double scale,
            std::vector<FlowModel::Hop>& hops) const;
  // An in-network transfer: it leaves over the sender's ports toward m.via, and the
  // switches those reach copy it to every member (kMulticast) or take it into a sum
  // that their reduction engine sends on to its owner (kReduce).
  FlowModel::Route in_network_route(const Message& m, std::int64_t packet) const;
  // Sorts `hops` by link into the route, each link once (weights summed).
  // The route's credit window: its sender's widest first link, where that is credit-based.
  void set_window(HostId src, FlowModel::Route& route) const;
  static void merge_hops(std::vector<FlowModel::Hop>& hops, FlowModel::Route& route);
  std::uint32_t direction(NodeRef n, PortIndex port) const {
    return n.kind == NodeRef::Kind::kHost ? host_dirs_[host_first_[n.index] + port] : switch_dirs_[switch_first_[n.index] + port];
  }

  const Network* net_;
  std::vector<int> rdma_port_;
  // Scratch of route() and walk(), kept between calls; routes no hash chose, by
  // (src, dst), for full-size messages.
  static constexpr std::size_t kMaxCachedRoutes = 1 << 20;
  mutable std::vector<Reach> frontier_, next_;
  mutable std::vector<std::pair<PortIndex, double>> out_;
  mutable std::vector<FlowModel::Hop> hops_;
  mutable bool hashed_ = false;
  mutable std::unordered_map<std::uint64_t, FlowModel::Route> cache_;
  std::vector<std::uint32_t> host_first_, host_dirs_;      // per host: its ports' directions
  std::vector<std::uint32_t> switch_first_, switch_dirs_;  // per switch
  // Reduction engines are flow-model links too, after the directions: per switch, its
  // engine's link (UINT32_MAX: none).
  std::vector<std::uint32_t> engine_link_;
  std::vector<double> engine_capacity_;  // bytes per ps, by engine
};

}  // namespace fabricsim
