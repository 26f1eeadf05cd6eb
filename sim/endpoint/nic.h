#pragma once
// An endpoint's transport: a host NIC, or a GPU with several links (NVLink to each
// NVSwitch chip, PCIe to its NIC). Endpoints never forward. Its parts, each in a file
// of its own:
// - the transport itself (here): sending, reliability, acknowledgements and the
//   congestion control's hooks;
// - the RDMA engine (sim/endpoint/rdma_engine.h): on a cluster with `nic_model: rdma` the
//   NIC is the transport endpoint of the GPUs behind it (set_rdma_nic, note_nic_port),
//   and a GPU posts work requests to it;
// - GPU multi-link striping (sim/endpoint/link_striping.h) for in-network transfers;
// - in-network services (sim/in_network/in_network_endpoint.h): receiving a switch's sums
//   and copies, and an RDMA NIC's relay of them;
// - the packets it makes (sim/endpoint/packet_factory.h).
//
// Sending: messages posted to it share its ports packet by packet in round-robin (like
// queue pairs on an RDMA NIC); each port, when free, pulls the next packet of a message
// routed over it whose class is not paused (PFC) or out of credits, and whose congestion
// control (sim/endpoint/congestion_control.h) allows it: its pacing rate and its window.
// Reliability is go-back-N: a NACK or the retransmission timer rewinds a message to its
// first unacknowledged packet.
//
// Receiving: packets are counted once each whatever their order (a bitmap holds those
// ahead of the in-order point), so spraying's reordering is never mistaken for loss; a
// gap triggers a NACK only where the path delivers in order (ECMP). Acknowledgements are
// cumulative, every `ack_interval` in-order packets, on the last, and on duplicates.
// ECN-marked packets produce at most one CNP per message per interval, when the
// congestion control asks for CNPs; acks echo the path's INT when it asks for that.
#include <cstdint>
#include <vector>

#include "sim/core/chunked_slots.h"
#include "sim/core/counter_fields.h"
#include "sim/core/simulator.h"
#include "sim/endpoint/congestion_control.h"
#include "sim/endpoint/link_striping.h"
#include "sim/endpoint/nic_config.h"
#include "sim/endpoint/packet_factory.h"
#include "sim/endpoint/rdma_engine.h"
#include "sim/endpoint/transport_state.h"
#include "sim/in_network/in_network_endpoint.h"
#include "sim/message.h"
#include "sim/net/egress_port.h"
#include "sim/net/packet_sink.h"
#include "sim/net/route_table.h"

namespace fabricsim {

struct NicCounters {
  // (What every packet counts first: one line of the NIC's.)
  std::uint64_t data_packets_sent = 0;
  std::uint64_t data_packets_received = 0;  // distinct packets
  std::uint64_t payload_bytes_received = 0;  // distinct packets' payload: each byte once
  std::uint64_t acks_sent = 0;
  std::uint64_t messages_finished = 0;
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t nacks_sent = 0;
  std::uint64_t nacks_received = 0;
  std::uint64_t cnps_sent = 0;
  std::uint64_t cnps_received = 0;
  std::uint64_t duplicate_packets_received = 0;
  // An RDMA NIC's work for the GPUs behind it (zero elsewhere):
  std::uint64_t work_requests = 0;        // sends posted to it
  std::uint64_t read_requests = 0;        // DMA reads it asked of its GPUs
  std::uint64_t read_packets = 0;         // payload packets those reads brought in
  std::uint64_t stale_read_packets = 0;   // read again after a rewind, or no longer needed
  std::uint64_t dma_writes = 0;           // received packets written into a GPU's memory
  std::uint64_t completions = 0;          // completions (CQEs) it gave its GPUs

  template <typename F, typename... C>
  static void for_each_field(F&& f, C&... c) {
    f(CounterField{"data_packets_sent"}, c.data_packets_sent...);
    f(CounterField{"data_packets_received"}, c.data_packets_received...);
    f(CounterField{"payload_bytes_received"}, c.payload_bytes_received...);
    f(CounterField{"acks_sent"}, c.acks_sent...);
    f(CounterField{"messages_finished"}, c.messages_finished...);
    f(CounterField{"retransmitted_packets"}, c.retransmitted_packets...);
    f(CounterField{"timeouts"}, c.timeouts...);
    f(CounterField{"nacks_sent"}, c.nacks_sent...);
    f(CounterField{"nacks_received"}, c.nacks_received...);
    f(CounterField{"cnps_sent"}, c.cnps_sent...);
    f(CounterField{"cnps_received"}, c.cnps_received...);
    f(CounterField{"duplicate_packets_received"}, c.duplicate_packets_received...);
    f(CounterField{"work_requests"}, c.work_requests...);
    f(CounterField{"read_requests"}, c.read_requests...);
    f(CounterField{"read_packets"}, c.read_packets...);
    f(CounterField{"stale_read_packets"}, c.stale_read_packets...);
    f(CounterField{"dma_writes"}, c.dma_writes...);
    f(CounterField{"completions"}, c.completions...);
  }
};

class Nic final : public PacketSink, public PacketSource, public PortObserver {
 public:
  static constexpr std::size_t kMaxPorts = 64;

  // `observer` hears of every message's sending, delivery and completion (the network's
  // dispatcher, which routes them to the message's owners).
  Nic(Simulator& sim, HostId host, const NicConfig& config, MessageObserver* observer);

  PortIndex add_port(EgressPort& port);
  // Port `i`'s link is credit-based: what arrives on it is answered with credit updates.
  void note_credit_port(PortIndex i) { credit_ports_ |= std::uint64_t{1} << i; }
  // RDMA NICs (a cluster's, as the hardware has them): the NIC is the transport endpoint
  // of the GPUs behind it. A GPU posts a message whose route leaves by port `i` (its PCIe
  // link to the NIC) as a work request; the NIC reads the payload from the GPU's memory
  // as its queue pair may send it, keeps the send side (go-back-N, congestion control)
  // and the receive side, writes what arrives into the GPU's memory, and tells the GPU of
  // each message's progress with completions over the same link.
  void note_nic_port(PortIndex i) { nic_ports_ |= std::uint64_t{1} << i; }
  void set_rdma_nic() { rdma_nic_ = true; }
  // Whether a message to `dst` goes through this GPU's RDMA NIC (its receive is then the
  // destination NIC's).
  bool posts_to_nic(HostId dst) const { return nic_ports_ != 0 && (ports_toward(dst) & nic_ports_) != 0; }
  std::size_t port_count() const { return ports_.size(); }
  EgressPort& port(PortIndex i) { return *ports_[i]; }
  const EgressPort& port(PortIndex i) const { return *ports_[i]; }
  // The ports that lie on a shortest path to each destination (by group, and per host
  // for hosts near this one), and every host's group, shared read-only by the network
  // (it is the addressing plan: packets carry their groups). Without a table, a one-port
  // endpoint sends everything on its port.
  void set_routes(RouteTable table, const std::vector<std::uint32_t>* host_group);
  const RouteTable& routes() const { return routes_; }
  std::uint32_t group_of(HostId h) const { return host_group_ ? (*host_group_)[h] : 0; }
  // Bit p: port p lies on a shortest path to `dst`.
  std::uint64_t ports_toward(HostId dst) const;

  // Opens a receive slot for a message from `src` (before its first packet can arrive):
  // its number travels in the message's data packets.
  std::uint32_t open_receive(MessageId id, HostId src, std::uint32_t sequence, std::uint32_t packets);
  // In a run split over threads other partitions' senders open receives here.
  void set_receive_locking(bool locking) { recvs_.set_locking(locking); }
  // The same for an in-network transfer (a multicast copy or a switch's sum), which is
  // never acknowledged. A copy is found by the message's name (`by_name`); a sum by the
  // slot its contributions carry.
  std::uint32_t open_in_network_receive(MessageId id, HostId src, std::uint32_t sequence, std::uint32_t packets,
                                        bool by_name);
  // Starts sending message `id`, described by `m` (its src must be this host), from now on.
  // An in-network message is striped over the ports toward m.dst by packet number, in
  // proportion to their bandwidth (as NVLink stripes addresses over a GPU's links), so
  // every contributor's packet n of a sum meets at the same switch; it is done once its
  // last packet has left.
  void post(MessageId id, const Message& m);
  // For observers: distinct packets received so far of the message in receive slot
  // `slot` (all of them once it is complete and the slot let go).
  std::uint32_t received_packets(std::uint32_t slot, MessageId id, std::uint32_t packets) const {
    const RecvState& r = recvs_[slot];
    return r.active && r.id == id ? r.received : packets;
  }

  void receive(Packet* p, PortIndex in_port) override;
  void prefetch_arrival(const Packet& p, PortIndex in_port) const override;
  void prefetch_arrival_more(const Packet& p, PortIndex in_port) const override;
  void prefetch_pull(PortIndex port) const override;
  Packet* pull(PortIndex port) override;
  // An RDMA NIC's ports: a relayed packet's buffer is free once it has left.
  void on_departure(const Departure& d) override;

  HostId host() const { return host_; }
  // Gives the NIC's timers order keys first .. first + kOrderKeys - 1 (EventHandler::order).
  static constexpr std::uint32_t kOrderKeys = 5;
  void set_order_keys(std::uint32_t first);
  const NicCounters& counters() const { return counters_; }
  // A run split over processes: those that did not run it take its runner's counters.
  void adopt_counters(const NicCounters& c) { counters_ = c; }
  const NicConfig& config() const { return config_; }
  // For a run that stopped making progress: which of this NIC's timers `h` is ("retransmit
  // timer", ...; null if none), and what the NIC waits for, in words.
  const char* timer_name(const EventHandler& h) const;
  std::string waiting_for() const;

 private:
  friend class RdmaEngine;
  friend class InNetworkEndpoint;
  // A timer of the NIC's: one pending event each, the handler travels in the event.
  struct Timer final : EventHandler {
    Nic* nic = nullptr;
    void (Nic::*fire)() = nullptr;
    void on_event() override { (nic->*fire)(); }
  };
  struct Sending {
    std::uint32_t slot;             // send slot
    std::uint8_t traffic_class;     // its SendState's
    bool own_message;               // SendKind::kMessage, not in-network: pacing alone may hold it
    std::uint64_t ports;            // bit p: port p may carry it
    Time next_send;                 // its SendState's, so a pull passes a paced message without reading it
  };
  static constexpr int kMaxBackoff = 30;  // the timer grows to at most 2^30 times its setting
  PacketFactory factory() const { return {sim_->packets(), config_}; }
  bool credit_port(PortIndex i) const { return ((credit_ports_ >> i) & 1u) != 0; }
  void undo_backoff(SendState& m, Time round_trip) const;
  Time timeout_of(const SendState& m) const;
  double line_rate(std::uint64_t ports) const;
  void enter_rotation(std::uint32_t slot);
  // A message that is acknowledged (not in-network) starts its timers and congestion control.
  void start_reliable(std::uint32_t slot, std::uint64_t ports);
  // Message `id` has just left whole (`slot`: in-network, its send slot, done with once
  // its owner is told); the owner hears from an event of its own.
  void note_sent(MessageId id, std::uint32_t slot);
  void send_full_ack(const Packet& late);
  void send_control(Packet* p);
  void on_data(Packet* p);
  void wake_later(PortIndex port);
  void wake_soon();
  void wake_ports_toward(HostId dst);
  void on_waker();
  void on_ack(Packet* p);
  void on_nack(Packet* p);
  void on_cnp(Packet* p);
  void rewound(SendState& m, std::uint32_t slot);
  void on_retransmit_timer();
  void on_rate_timer();
  void on_pacer();
  void on_sent_notifier();
  void arm_retransmit_timer();
  void arm_rate_timer();
  void wake_ports();
  bool all_but_self_via_port0() const;  // whether routes_ says what via_port0_ does

  Simulator* sim_;
  HostId host_;
  bool rdma_nic_ = false;
  bool have_routes_ = false;     // routes_ and set_mask_ pick among ports
  bool via_port0_ = false;       // routes_ send every other host through port 0: not read
  bool telemetry_ = false;       // acks echo INT
  MessageObserver* observer_;
  SlotTable<SendState> sends_;
  // Opened by whoever makes a message to this host (in a split run, another partition's
  // thread, a window before its first packet can arrive); read and released here.
  ChunkedSlots<RecvState, 4> recvs_;
  const CongestionControl* cc_;  // null: rate-less
  Time cnp_interval_ = 0;        // 0: no CNPs
  std::uint64_t credit_ports_ = 0;  // bit p: port p is credit-based
  std::vector<EgressPort*> ports_;
  std::vector<Sending> sending_;           // messages with packets to send, served round-robin
  std::size_t next_ = 0;                   // round-robin position in sending_
  const std::vector<std::uint32_t>* host_group_ = nullptr;
  // What every packet reads ends here, with the counters every packet counts and the
  // settings it reads, in the first nine lines (see prefetch_arrival and the host port's
  // prefetch of its source).
  alignas(64) NicCounters counters_;
  NicConfig config_;
  RouteTable routes_;
  std::vector<std::uint64_t> set_mask_;    // per candidate set of routes_: bit p = port p
  std::vector<std::uint32_t> unfinished_;  // send slots not yet fully acknowledged
  Timer retransmit_timer_;
  Timer rate_timer_;
  Timer pacer_;
  std::uint64_t paced_ports_ = 0;  // bit p: port p found only paced messages; the pacer wakes these
  // Messages whose last packet has just left for the first time: their owners are told
  // from an event of its own at the same time (not from inside a port's pull, where a
  // new message posted by the owner would re-enter this NIC).
  Timer sent_notifier_;
  struct JustSent {
    MessageId id;
    std::uint32_t slot;  // in-network: the send slot, done with once its owner is told
  };
  std::vector<JustSent> just_sent_;
  LinkStriping striping_;
  // Ports to wake from an event of their own (not from inside another port's pull).
  Timer waker_;
  std::uint64_t wake_mask_ = 0;
  std::uint64_t nic_ports_ = 0;  // a GPU's: bit p: port p leads to its RDMA NIC
  RdmaEngine rdma_;
  InNetworkEndpoint in_network_;
};

}  // namespace fabricsim
