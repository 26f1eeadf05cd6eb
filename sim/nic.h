#pragma once
// A host's network interface. Sending: messages posted to it share the wire packet by
// packet in round-robin (like queue pairs on an RDMA NIC), and a data packet is built
// only when the egress port asks for one. Receiving: counts packets per message and
// acknowledges every `ack_interval` packets and the last one; the sender completes the
// message when the acknowledgements cover all its packets.
#include <cstdint>
#include <vector>

#include "sim/egress_port.h"
#include "sim/message.h"
#include "sim/packet_sink.h"

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
  std::uint64_t acks_sent = 0;
  std::uint64_t messages_finished = 0;
};

class Nic final : public PacketSink, public PacketSource {
 public:
  Nic(Simulator& sim, HostId host, const NicConfig& config, MessageTable& messages)
      : sim_(&sim), host_(host), config_(config), messages_(&messages) {}

  void attach_port(EgressPort& port) {
    port_ = &port;
    port.set_source(this);
  }
  bool attached() const { return port_ != nullptr; }

  // Starts sending message `id` (its src must be this host) from now on.
  void post(MessageId id);

  void receive(Packet* p, PortIndex in_port) override;
  Packet* pull() override;

  HostId host() const { return host_; }
  const NicCounters& counters() const { return counters_; }
  const NicConfig& config() const { return config_; }

 private:
  void on_data(Packet* p);
  void on_ack(Packet* p);

  Simulator* sim_;
  HostId host_;
  NicConfig config_;
  MessageTable* messages_;
  EgressPort* port_ = nullptr;
  std::vector<MessageId> sending_;  // messages with packets left to send, served round-robin
  std::size_t next_ = 0;            // round-robin position in sending_
  NicCounters counters_;
};

}  // namespace fabricsim
