#pragma once
// An endpoint's transport: a host NIC, or a GPU with several links (NVLink to each
// NVSwitch chip, PCIe to its NIC). Sending: messages posted to it share its ports packet
// by packet in round-robin (like queue pairs on an RDMA NIC); each port, when free,
// pulls the next packet of a message routed over it, so a message whose destination
// is reachable over several ports is spread over all of them in proportion to their
// speed. Receiving: counts packets per message and acknowledges every `ack_interval`
// packets and the last one; the sender completes the message when the
// acknowledgements cover all its packets. Endpoints never forward.
#include <cstdint>
#include <vector>

#include "sim/egress_port.h"
#include "sim/message.h"
#include "sim/packet_sink.h"
#include "sim/route_table.h"

namespace fabricsim {

class Simulator;

struct NicConfig {
  std::uint32_t mtu = 4096;           // payload bytes per packet
  std::uint32_t header_bytes = 64;    // added to every data packet on the wire
  std::uint32_t ack_bytes = 64;       // an acknowledgement's size on the wire
  std::uint32_t ack_interval = 1;     // acknowledge every this many data packets
  std::uint8_t ack_traffic_class = 0;
};

// Packets needed for a message of `bytes`: ceil(bytes / mtu), and one for an empty one.
constexpr std::uint32_t packets_for(std::int64_t bytes, std::uint32_t mtu) {
  return bytes <= 0 ? 1u : static_cast<std::uint32_t>((bytes + mtu - 1) / mtu);
}

struct NicCounters {
  std::uint64_t data_packets_sent = 0;
  std::uint64_t data_packets_received = 0;
  std::uint64_t payload_bytes_received = 0;
  std::uint64_t acks_sent = 0;
  std::uint64_t messages_finished = 0;
};

class Nic final : public PacketSink, public PacketSource {
 public:
  static constexpr std::size_t kMaxPorts = 64;

  Nic(Simulator& sim, HostId host, const NicConfig& config, MessageTable& messages)
      : sim_(&sim), host_(host), config_(config), messages_(&messages) {}

  PortIndex add_port(EgressPort& port);
  std::size_t port_count() const { return ports_.size(); }
  // For each destination host, the ports that lie on a shortest path to it. Without a
  // table, a one-port endpoint sends everything on its port.
  void set_routes(const RouteTable& table);

  // Starts sending message `id` (its src must be this host) from now on.
  void post(MessageId id);

  void receive(Packet* p, PortIndex in_port) override;
  Packet* pull(PortIndex port) override;

  HostId host() const { return host_; }
  const NicCounters& counters() const { return counters_; }
  const NicConfig& config() const { return config_; }

 private:
  struct Sending {
    MessageId id;
    std::uint64_t ports;  // bit p: port p may carry it
  };
  std::uint64_t ports_toward(HostId dst) const;
  void on_data(Packet* p);
  void on_ack(Packet* p);

  Simulator* sim_;
  HostId host_;
  NicConfig config_;
  MessageTable* messages_;
  std::vector<EgressPort*> ports_;
  std::vector<std::uint64_t> route_mask_;  // per destination host
  std::vector<Sending> sending_;           // messages with packets left, served round-robin
  std::size_t next_ = 0;                   // round-robin position in sending_
  NicCounters counters_;
};

}  // namespace fabricsim
