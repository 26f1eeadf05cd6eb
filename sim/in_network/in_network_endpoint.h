#pragma once
// An endpoint's part in in-network collectives (NVLink SHARP on NVSwitch, SHARP on
// InfiniBand switches): receiving a switch's sums and multicast copies, which are
// lossless and never acknowledged, and, on an RDMA NIC, relaying its GPU's in-network
// traffic to and from the wire as it is (it is not the queue pairs'). Sending a
// contribution is the transport's (striped over a GPU's links, sim/endpoint/link_striping.h).
// Part of its endpoint (sim/endpoint/nic.h), whose receive slots, ports and counters it
// works on.
#include <cstdint>
#include <vector>

#include "sim/core/packet.h"
#include "sim/net/egress_port.h"

namespace fabricsim {

class Nic;

class InNetworkEndpoint {
 public:
  explicit InNetworkEndpoint(Nic& nic) : nic_(nic) {}

  // Receive slot `slot` is for a multicast copy, found by the message's name.
  void note_named_receive(std::uint32_t slot) { named_recvs_.push_back(slot); }
  // A sum or copy arriving for this endpoint: counted, its message delivered on the last.
  void on_data(Packet* p);
  // An RDMA NIC: passes its GPU's in-network packet on, its buffer held until it leaves.
  void relay(Packet* p, PortIndex in_port);
  // An RDMA NIC's port: a relayed packet has left, so its buffer is free.
  void on_departure(const Departure& d);

 private:
  // A relayed packet's ingress_port: the port it came in by, marked (a packet the NIC
  // made has 0 there, one it received the last switch's port or kNoPort).
  static constexpr std::uint16_t kRelayedMark = 0x4000;
  static constexpr std::uint16_t kMarkBits = 0xc000;

  Nic& nic_;
  std::vector<std::uint32_t> named_recvs_;  // receive slots found by name (multicast copies)
};

}  // namespace fabricsim
