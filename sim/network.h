#pragma once
// All hosts, switches, ports and links of one simulation, in stable storage, wired
// once before the run by plain pointers. Built by topologies/ (which resolves names and
// routes); read by the recorders after the run.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <bit>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <tuple>
#include <vector>

#include "sim/net/egress_port.h"
#include "sim/flow/flow_model.h"
#include "sim/net/link.h"
#include "sim/message.h"
#include "sim/message_dispatcher.h"
#include "sim/endpoint/nic.h"
#include "sim/net/port_block.h"
#include "sim/core/hash_mix.h"
#include "sim/core/simulator.h"
#include "sim/net/switch.h"

namespace fabricsim {

class FlowRouter;

struct NodeRef {
  // kNic: an RDMA NIC (Nic::set_rdma_nic) built in place of switch `index` of the
  // topology, which stays a switch number with no ports (numbers do not move).
  enum class Kind : std::uint8_t { kHost, kSwitch, kNic };
  Kind kind;
  std::uint32_t index;

  static NodeRef host(std::uint32_t i) { return {Kind::kHost, i}; }
  static NodeRef sw(std::uint32_t i) { return {Kind::kSwitch, i}; }
  static NodeRef nic(std::uint32_t i) { return {Kind::kNic, i}; }
  bool operator==(const NodeRef&) const = default;
};

struct NetworkParams {
  int traffic_classes = 1;
  NicConfig nic;
  LoadBalancing load_balancing = LoadBalancing::kEcmp;
  std::uint64_t salt_seed = 0;  // mixed into every switch's ECMP salt
  // Shared-buffer switches (with PFC on the classes in pfc_classes_mask); without, each
  // egress class queue tail-drops at its own capacity.
  bool shared_buffer = false;
  BufferConfig buffer;
  std::uint8_t pfc_classes_mask = 0;
  EcnConfig ecn;
  std::vector<EcnForSpeed> ecn_by_speed;  // per-port-speed thresholds (else `ecn`'s)
};

// One direction of a cable: the egress port that feeds it and the link itself.
struct LinkDirection {
  NodeRef from;
  PortIndex from_port;
  NodeRef to;
  PortIndex to_port;
  EgressPort* port;
  Link* link;
};

class Network {
 public:
  Network(Simulator& sim, const NetworkParams& params) : sim_(&sim), params_(params), dispatcher_(&messages_) {
    messages_.set_locking(false);  // until split (set_partitions)
  }
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Splits the run into partitions: host h's NIC, ports and incoming links run on
  // partitions[host_partition[h]], switch s's on partitions[switch_partition[s]]; a link
  // between partitions is cut (sim/net/link.h). Call before any node is added. Unsplit,
  // everything runs on the network's simulator.
  void set_partitions(std::vector<Simulator*> partitions, std::vector<std::uint32_t> host_partition,
                      std::vector<std::uint32_t> switch_partition);
  std::size_t partition_count() const { return partitions_.empty() ? 1 : partitions_.size(); }
  Simulator& partition(std::size_t q) { return partitions_.empty() ? *sim_ : *partitions_[q]; }
  std::uint32_t host_partition(HostId h) const { return partitions_.empty() ? 0 : host_partition_[h]; }
  std::uint32_t switch_partition(std::uint32_t s) const { return partitions_.empty() ? 0 : switch_partition_[s]; }
  std::uint32_t partition_of(NodeRef n) const {
    return n.kind == NodeRef::Kind::kHost ? host_partition(n.index) : switch_partition(n.index);
  }
  // Between windows: partition q puts on its cut links what the others sent it.
  void deliver_cut_packets(std::uint32_t q);
  // Partition q's packets for the others (a split over processes fills a remote
  // partition's from what its process sent).
  Outbox& outbox(std::uint32_t q) { return outboxes_[q]; }
  std::size_t cut_link_count() const;  // cables between partitions
  // The smallest latency of a cut link (kTimeMax when nothing is cut): the lookahead.
  Time lookahead() const { return lookahead_; }
  // The longest link latency: how long word of an event at one endpoint takes to reach
  // the others (a notice), never shorter than a split run's lookahead.
  Time longest_latency() const {
    Time longest = 0;
    for (const LinkDirection& d : directions_) longest = std::max(longest, d.link->latency());
    return longest;
  }

  // Over MPI processes: the partitions this process runs (unset: all). A message to an
  // endpoint of another process opens no receive here: post() leaves a notice for that
  // process (remote_opens), which opens it between windows (open_remote) and names it in
  // the message's packets as they come in (resolve_remote_slot).
  void set_local_partitions(std::vector<bool> local);
  bool local_partition(std::size_t q) const { return local_.empty() || local_[q]; }
  bool local_host(HostId h) const { return local_partition(host_partition(h)); }
  bool over_processes() const { return !local_.empty(); }
  // From now on (once the messages made before the run are in), post() leaves notices.
  void open_receives_by_notice() { by_notice_ = true; }
  struct RemoteOpen {
    HostId src = 0, dst = 0;
    std::uint32_t sequence = 0, packets = 0, tag = 0, receiver_key = 0;
    std::int64_t bytes = 0;
    Time posted = 0;
    std::uint8_t traffic_class = 0;
  };
  // Notices made by partition q's senders since the last window.
  std::vector<RemoteOpen>& remote_opens(std::uint32_t q) { return remote_opens_[q]; }
  void open_remote(const RemoteOpen& r);
  void resolve_remote_slot(Packet& p);
  // Agents by observer_key() (a remote message's receiver is named by it); they
  // register while they may receive.
  void register_observer(MessageObserver* o);
  void unregister_observer(const MessageObserver* o);

  HostId add_host();
  std::uint32_t add_switch();
  // Switch `s` (added, no links yet) is an RDMA NIC instead: connect it as NodeRef::nic(s).
  // Its GPUs (the hosts it links to) post their messages to it. Not in split runs.
  void make_rdma_nic(std::uint32_t s);
  bool is_rdma_nic(std::uint32_t s) const { return s < rdma_nic_index_.size() && rdma_nic_index_[s] != kNoNic; }
  Nic& rdma_nic(std::uint32_t s) { return rdma_nics_[rdma_nic_index_.at(s)]; }
  const Nic& rdma_nic(std::uint32_t s) const { return rdma_nics_[rdma_nic_index_.at(s)]; }
  std::size_t rdma_nic_count() const { return rdma_nics_.size(); }
  // Counters summed over components, field by field (sim/core/counter_fields.h): every
  // endpoint's transport (hosts' and RDMA NICs'), the RDMA NICs' alone, the switches'.
  NicCounters endpoint_counters() const;
  NicCounters rdma_nic_counters() const;
  SwitchCounters switch_counters() const;
  // A full-duplex cable between two nodes; returns the directions (a->b, b->a).
  // `queue_capacity_bytes` bounds each class queue on switch ports; endpoint ports
  // never drop (their data waits in the endpoint until the wire is free).
  // `credit_bytes` > 0 makes it credit-based: each end grants the other that much buffer
  // per class (at least one packet, mtu + header_bytes).
  // Returns its two directions (a to b, b to a): the cable's, numbered in connect order.
  std::pair<std::size_t, std::size_t> connect(NodeRef a, NodeRef b, Bandwidth bandwidth, Time latency,
                                              std::int64_t queue_capacity_bytes, std::int64_t credit_bytes = 0);
  // The two directions of the k-th cable connected (topologies/compile.h: the topology's
  // link k): connect() adds each cable's two directions, a to b first, in turn.
  std::pair<std::size_t, std::size_t> cable(std::size_t k) const { return {2 * k, 2 * k + 1}; }
  std::size_t cable_count() const { return directions_.size() / 2; }

  // Optional, before switch `s`'s first link: room for its `ports` egress ports side by
  // side (see sim/net/port_block.h); a switch given more ports than that keeps them apart.
  void reserve_switch_ports(std::uint32_t s, std::size_t ports);

  // Gives every switch its shared buffer and ECN settings, once all links are in.
  void finish_switches();

  // Registers a message; it is sent once post() hands it to its source NIC.
  MessageId add_message(HostId src, HostId dst, std::int64_t bytes, std::uint8_t traffic_class = 0);
  // The same with what the workload attaches: the receive it feeds (`tag`), its flow
  // shares and its NCCL connection (sim/message.h).
  struct MessageSpec {
    HostId src = 0;
    HostId dst = 0;
    std::int64_t bytes = 0;
    std::uint8_t traffic_class = 0;
    std::uint32_t tag = 0;
    std::uint16_t shares = 1;
    std::uint16_t connection = 0;
    double rate_cap_bps = 0;  // Message::rate_cap_bps
  };
  MessageId add_message(const MessageSpec& spec);
  // The receive an in-network transfer or one of its receives (add_contribution,
  // add_multicast, open_sum_for_all) feeds.
  void set_tag(MessageId id, std::uint32_t tag) { messages_[id].tag = tag; }

  // In-network collectives (NVLink SHARP, SHARP; sim/in_network/in_network_services.cpp).
  // Before the run:
  // Gives switch `s` a reduction engine of `rate` (sums per second, in bytes); call
  // before finish_switches().
  void add_reduction_engine(std::uint32_t s, Bandwidth rate);
  // A multicast group of `members`, set up in every switch that has a link to each of
  // them (an NVSwitch domain's chips). The same members give the same id; nullopt
  // when no switch reaches them all.
  std::optional<std::uint16_t> multicast_group(const std::vector<HostId>& members);
  // Whether some reducing switch has a link to each of `hosts`.
  bool can_reduce_in_network(const std::vector<HostId>& hosts) const;
  // During the run (lossless links only: these are never acknowledged):
  // A multicast of `bytes` from `src` to every member of `group` (src included if a
  // member). Returns the sender's message; `receives` gets each member's receive record,
  // in member order, to assign to the member's agent.
  MessageId add_multicast(HostId src, std::uint16_t group, std::int64_t bytes, std::uint8_t traffic_class,
                          std::vector<MessageId>& receives);
  // `src`'s contribution to a sum of `contributors` contributions that a reducing switch
  // delivers to `owner` (src may be the owner). The first contribution made opens the
  // owner's receive (pass `*sum_slot` = kNoSum; it is set) and its record is the sum's
  // delivery; later ones pass the slot back.
  static constexpr std::uint32_t kNoSum = UINT32_MAX;
  // SHARP (a sum the switch returns to every member of multicast `group`): opens the
  // sum, a receive at every member found by the sum's name; `receives` gets each
  // member's receive record, in member order. Returns the sum's number.
  std::uint32_t open_sum_for_all(std::uint16_t group, std::int64_t bytes, std::uint8_t traffic_class,
                                 std::vector<MessageId>& receives);
  // `src`'s contribution to that sum; it leaves toward `via` (another member, through
  // the reducing switch).
  MessageId add_contribution_for_all(HostId src, std::uint16_t group, std::uint32_t sum, HostId via, std::int64_t bytes,
                                     std::uint8_t traffic_class);
  // It leaves by the ports toward `via` (another member of the sum: the owner may be src).
  MessageId add_contribution(HostId src, HostId owner, HostId via, std::uint16_t contributors, std::int64_t bytes,
                             std::uint8_t traffic_class, std::uint32_t* sum_slot);
  void post(MessageId id) {
    Message& m = messages_[id];
    m.posted = partition(host_partition(m.src)).now();
    if (flow_model_ != nullptr) {
      post_flow(id, m);
      return;
    }
    if (m.recv_slot == kRemoteSlot) post_remote(id, m);
    nics_[m.src].post(id, m);
  }
  // Flow fidelity: messages go to `model` as flows routed by `router` instead of to the
  // NICs as packets (sim/flow/flow_model.h). Both outlive the network's run.
  void set_flow_model(FlowModel* model, const FlowRouter* router) {
    flow_model_ = model;
    flow_router_ = router;
  }
  // What a workload may ask of the transport beyond one message per send, instead of
  // which fidelity runs: whether it merges equal sends, a message's `shares` (sends that
  // would split the same links max-min alike) and a ring's sends as one flow
  // (post_ring_flows). Packet NICs send every packet, so they do not.
  bool merges_equal_sends() const { return flow_model_ != nullptr; }
  // Flow fidelity: the channels' rings of one ring collective. Each ring's message `id`
  // (made by add_message, of the payload every edge carries) stands for the sends of its
  // edges (`edges`: sender, successor), each edge `steps` sends of `chunk` bytes,
  // `wire_bytes` in all on the wire. One flow per ring loads every edge's links (`shares`
  // times, for that many rings on the same links) and moves at the rate of the ring's
  // tightest edge; its delivery delay is the slowest edge's. Returns, per ring, what its
  // steps wait for besides its flow.
  struct RingFlow {
    MessageId id = 0;
    const std::vector<std::pair<HostId, HostId>>* edges = nullptr;
    std::int64_t chunk = 0;
    std::int64_t wire_bytes = 0;
  };
  struct RingFlowTiming {
    Time deliver_delay = 0;    // the flow's: its slowest edge's
    Time mean_edge_delay = 0;  // the edges' own deliver delays, averaged
    // The edges' transfer times at their own rates, averaged, over the tightest edge's
    // (1 where edges are alike): every edge of the collective's rings sending at once, a
    // link's edges sharing it alike, within the channel's rate.
    double mean_transfer_share = 1.0;
  };
  // A ring's route, kept per (edges, chunk, shares) for the network's life.
  struct RingRoute {
    FlowModel::Route route;
    Message routed_as;  // the message whose edges' hashes chose its paths
    // `route` as its flows start (FlowModel::prepare), once its first flow is posted: a
    // cache of the route's, so refreshed through a const ring.
    mutable FlowModel::Route prepared;
  };
  // For a caller that posts the same rings (edges, chunks, shares and rate) again and
  // again: what the network's tables gave their first post, so later posts skip the
  // lookups (hashing every edge). Empty until that first post fills it.
  struct KnownRingRoutes {
    std::vector<const RingRoute*> routes;
    const std::vector<double>* transfer_shares = nullptr;
    double cap = 0;
  };
  std::vector<RingFlowTiming> post_ring_flows(const std::vector<RingFlow>& rings, std::uint16_t shares,
                                              KnownRingRoutes* known = nullptr);
  const std::vector<HostId>& multicast_members(std::uint16_t group) const { return multicast_members_.at(group); }
  // For observers and tests: distinct packets of message `id` its destination has (the
  // receive state is the destination NIC's).
  std::uint32_t received_packets(MessageId id) const {
    const Message& m = messages_[id];
    if (flow_model_ != nullptr) return m.delivered >= 0 ? m.packets : 0;
    return receiver_of(m.src, m.dst).received_packets(m.recv_slot, id, m.packets);
  }

  // A fresh order key (EventHandler::order) for a handler of the workload's: keys follow
  // the order things are built in, which does not depend on how a run is split.
  // Keys below kFirstComponentKey are kept for monitors, which run first at their time.
  static constexpr std::uint32_t kFirstComponentKey = EventHandler::kMonitorKeys;
  std::uint32_t next_order_key() { return next_order_key_++; }

  Simulator& sim() { return *sim_; }
  const NetworkParams& params() const { return params_; }
  std::size_t host_count() const { return nics_.size(); }
  std::size_t switch_count() const { return switches_.size(); }
  Nic& nic(HostId h) { return nics_[h]; }
  const Nic& nic(HostId h) const { return nics_[h]; }
  Switch& switch_at(std::uint32_t i) { return switches_[i]; }
  const Switch& switch_at(std::uint32_t i) const { return switches_[i]; }
  MessageTable& messages() { return messages_; }
  // Completions of each message go to the observer assigned to it here.
  MessageDispatcher& dispatcher() { return dispatcher_; }
  const MessageTable& messages() const { return messages_; }
  const std::vector<LinkDirection>& directions() const { return directions_; }
  // Every host's routing group (the addressing plan), read-only once set.
  void set_host_groups(std::vector<std::uint32_t> groups) { host_groups_ = std::move(groups); }
  const std::vector<std::uint32_t>& host_groups() const { return host_groups_; }

 private:
  // A receive at every member of multicast `group`, found by the name (name_src,
  // name_sequence) its packets carry; one record each, with no sender side.
  void open_member_receives(std::uint16_t group, InNetwork kind, HostId name_src, std::uint32_t name_sequence,
                            std::uint64_t serial, std::int64_t bytes, std::uint8_t traffic_class, std::vector<MessageId>& receives);
  void post_flow(MessageId id, const Message& m);
  void post_remote(MessageId id, const Message& m);
  PacketSink& sink(NodeRef n);
  // Where message `m`'s receive is kept: its destination, or the destination's RDMA NIC.
  Nic& receiver_of(HostId src, HostId dst) {
    return nics_[src].posts_to_nic(dst) ? rdma_nics_[host_rdma_nic_.at(dst)] : nics_[dst];
  }
  const Nic& receiver_of(HostId src, HostId dst) const {
    return nics_[src].posts_to_nic(dst) ? rdma_nics_[host_rdma_nic_.at(dst)] : nics_[dst];
  }
 public:
  // The partition that keeps the receive of a message from `src` to `dst`.
  std::uint32_t receiver_partition(HostId src, HostId dst) const {
    return nics_[src].posts_to_nic(dst) ? switch_partition(rdma_nic_switch_[host_rdma_nic_.at(dst)]) : host_partition(dst);
  }
 private:
  Simulator& sim_of(NodeRef n) {
    return partition(n.kind == NodeRef::Kind::kHost ? host_partition(n.index) : switch_partition(n.index));
  }
  PortIndex add_port(NodeRef n, EgressPort& port);
  // A new egress port at `n`: in its switch's block where it has room, else on its own.
  EgressPort& make_port(NodeRef n, Bandwidth bandwidth, std::int64_t queue_capacity_bytes);
  struct SwitchAdjacency {
    std::vector<std::vector<std::uint32_t>> neighbours;     // switch -> switches it links to
    std::vector<std::vector<HostId>> attached;              // switch -> hosts it links to
    std::vector<std::vector<std::uint32_t>> host_switches;  // host -> switches it links to
  };
  const SwitchAdjacency& adjacency() const;
  std::vector<std::uint32_t> switches_reaching(const std::vector<HostId>& hosts) const;

  Simulator* sim_;
  NetworkParams params_;
  std::uint32_t next_order_key_ = kFirstComponentKey;
  std::vector<Simulator*> partitions_;
  std::vector<std::uint32_t> host_partition_;
  std::vector<std::uint32_t> switch_partition_;
  std::vector<Outbox> outboxes_;                 // by sending partition
  std::vector<std::vector<Link*>> cut_links_;    // by receiving partition
  std::deque<Link::CutEnd> cut_ends_;
  Time lookahead_ = kTimeMax;
  std::deque<Nic> nics_;
  std::deque<Switch> switches_;
  static constexpr std::uint32_t kNoNic = UINT32_MAX;
  std::deque<Nic> rdma_nics_;
  std::vector<std::uint32_t> rdma_nic_index_;  // by switch number: its RDMA NIC, or kNoNic
  std::vector<std::uint32_t> host_rdma_nic_;   // by host: the RDMA NIC it links to, or kNoNic
  std::vector<std::uint32_t> rdma_nic_switch_; // by RDMA NIC: its switch number
  std::deque<EgressPort> ports_;
  std::vector<std::unique_ptr<PortBlock>> switch_ports_;  // by switch: its reserved block, if any
  std::deque<Link> links_;
  std::vector<LinkDirection> directions_;
  std::vector<std::uint32_t> host_groups_;
  std::map<std::vector<HostId>, std::uint16_t> multicast_ids_;
  std::vector<std::vector<HostId>> multicast_members_;  // by group id
  std::vector<std::uint32_t> sums_opened_;               // by group id: SHARP sums so far
  MessageTable messages_;
  MessageDispatcher dispatcher_;
  std::vector<bool> local_;
  bool by_notice_ = false;
  std::vector<std::vector<RemoteOpen>> remote_opens_;  // by sending partition
  std::mutex remote_mutex_;                             // what follows (partitions deliver at once)
  std::unordered_map<std::uint64_t, std::uint32_t> remote_slots_;  // (src, sequence) -> receive slot
  std::unordered_map<std::uint32_t, MessageObserver*> observers_;    // by observer_key()
  FlowModel* flow_model_ = nullptr;
  const FlowRouter* flow_router_ = nullptr;
  // Coupled rings' routes by (edges, chunk, shares): see post_ring_flows (RingRoute).
  // Hashed, not ordered: a 100,000-GPU step has a ring per node's tensor-parallel group
  // and launches millions of collectives over them, and a tree of them is a dozen misses
  // (node and edges) per launch. Looked up by a tuple of references (is_transparent),
  // without copying a ring's edges.
  struct RingKeyHash {
    using is_transparent = void;
    template <class Key>
    std::size_t operator()(const Key& k) const {
      std::uint64_t h = hash_mix(static_cast<std::uint64_t>(std::get<1>(k)), std::get<2>(k));
      for (const auto& [from, to] : std::get<0>(k)) h = hash_mix(h, (std::uint64_t{from} << 32) | to);
      return hash_finish(h);
    }
  };
  std::unordered_map<std::tuple<std::vector<std::pair<HostId, HostId>>, std::int64_t, std::uint16_t>, RingRoute, RingKeyHash,
                     std::equal_to<>>
      ring_routes_;
  // A collective's rings' transfer shares (RingFlowTiming::mean_transfer_share), by its
  // rings' routes and the channel's rate.
  struct RouteSetHash {
    std::size_t operator()(const std::pair<std::vector<const RingRoute*>, double>& k) const {
      std::uint64_t h = std::bit_cast<std::uint64_t>(k.second);
      for (const RingRoute* r : k.first) h = hash_mix(h, reinterpret_cast<std::uintptr_t>(r));
      return hash_finish(h);
    }
  };
  std::unordered_map<std::pair<std::vector<const RingRoute*>, double>, std::vector<double>, RouteSetHash> ring_transfer_shares_;
  // post_ring_flows' last part: each ring's flow started on its route.
  std::vector<RingFlowTiming> start_ring_flows(const std::vector<RingFlow>& rings, const std::vector<const RingRoute*>& routes,
                                               const std::vector<double>& transfer_shares, double cap);
  // Per ring: its edges' (`edge_hops`: per ring, per edge, its links) transfer share,
  // where each ring stands for `shares` equal ones (their loads together).
  std::vector<double> ring_transfer_shares(const std::vector<std::vector<std::vector<FlowModel::Hop>>>& edge_hops,
                                           double cap, std::uint16_t shares) const;
  // Flow fidelity keeps no NIC receive slots: a multicast's member records wait here
  // for their flow, and sums are numbered here.
  std::unordered_map<MessageId, std::vector<MessageId>> flow_multicast_receives_;
  std::uint32_t next_flow_sum_ = 0;
  mutable std::once_flag adjacency_once_;
  mutable SwitchAdjacency adjacency_;
};

}  // namespace fabricsim
