#include "sim/in_network/in_network_endpoint.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "sim/core/simulator.h"
#include "sim/endpoint/nic.h"

namespace fabricsim {

void InNetworkEndpoint::on_data(Packet* p) {
  // Lossless and unacknowledged: count it, deliver on the last.
  auto& recvs = nic_.recvs_;
  std::uint32_t slot = p->recv_slot;
  if (p->in_network == InNetwork::kReplica) {
    // A multicast copy names the message, not this member's slot (the switch made it).
    slot = UINT32_MAX;
    for (std::uint32_t s : named_recvs_) {
      const RecvState& r = recvs[s];
      if (r.src == p->src && r.sequence == p->sequence) {
        slot = s;
        break;
      }
    }
  }
  NicCounters& counters = nic_.counters_;
  if (slot == UINT32_MAX || !recvs[slot].active || !recvs[slot].in_network) {
    ++counters.duplicate_packets_received;  // a sum or copy for nobody: a model error
    nic_.sim_->packets().release(p);
    return;
  }
  RecvState& r = recvs[slot];
  ++r.received;
  ++counters.data_packets_received;
  counters.payload_bytes_received += p->payload;
  const bool by_name = p->in_network == InNetwork::kReplica;
  nic_.sim_->packets().release(p);
  if (r.received < r.packets) return;
  const MessageId id = r.id;
  if (by_name) std::erase(named_recvs_, slot);
  recvs.release(slot, /*clear=*/true);
  if (nic_.observer_ != nullptr) nic_.observer_->on_message_delivered(id, nic_.sim_->now());
}

void InNetworkEndpoint::relay(Packet* p, PortIndex in_port) {
  p->ingress_port = static_cast<std::uint16_t>(kRelayedMark | in_port);
  p->ingress_class = p->traffic_class;
  const std::uint64_t ports = nic_.ports_toward(p->dst);
  if (ports == 0) throw std::logic_error("an in-network packet an RDMA NIC has no route for");
  std::uint64_t rest = ports;
  for (int k = static_cast<int>(flow_hash(*p) % static_cast<std::uint32_t>(std::popcount(ports))); k > 0; --k) rest &= rest - 1;
  nic_.port(static_cast<PortIndex>(std::countr_zero(rest))).enqueue(p, /*granted=*/true);
}

void InNetworkEndpoint::on_departure(const Departure& d) {
  if ((d.ingress_port & kMarkBits) != kRelayedMark) return;
  const auto in = static_cast<PortIndex>(d.ingress_port & ~kMarkBits);
  if (nic_.credit_port(in)) nic_.port(in).owe_credits(d.ingress_class, d.wire_bytes);
}

}  // namespace fabricsim
