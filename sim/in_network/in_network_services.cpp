// The network's in-network services (NVLink SHARP on NVSwitch, SHARP on InfiniBand):
// reduction engines and multicast groups in the switches, set up before the run, and
// the transfers that use them (multicasts, contributions to a switch's sum, SHARP's sums
// returned to every member), whose receives are found by name at the members
// (sim/in_network/in_network_endpoint.h). At flow fidelity the same calls make flows.
#include <algorithm>
#include <stdexcept>

#include "sim/flow/flow_model.h"
#include "sim/network.h"

namespace fabricsim {

void Network::add_reduction_engine(std::uint32_t s, Bandwidth rate) {
  if (rate.bits_per_second <= 0) throw std::invalid_argument("reduction rate must be positive");
  Switch& sw = switches_.at(s);
  EgressPort& port = make_port(NodeRef::sw(s), rate, EgressPort::kUnlimited);
  const PortIndex index = sw.add_port(port);
  // The engine's output loops back into the switch after the latency floor (1 ns).
  Link& loop = links_.emplace_back(sim_of(NodeRef::sw(s)), ns(1), sw, index);
  port.set_order(next_order_key());
  loop.set_order(next_order_key());
  port.attach(loop);
  sw.set_reduction_engine(index);
}

const Network::SwitchAdjacency& Network::adjacency() const {
  // Built on first use (collectives ask per group, thousands of groups at cluster scale):
  // a scan of every link per group grew with groups x links.
  std::call_once(adjacency_once_, [this] {
    SwitchAdjacency& a = adjacency_;
    a.neighbours.resize(switches_.size());
    a.attached.resize(switches_.size());
    a.host_switches.resize(nics_.size());
    // An RDMA NIC sits where its relaying switch would (by its switch number): SHARP's
    // traffic passes through it (Nic::relay).
    for (const LinkDirection& d : directions_) {
      if (d.from.kind == NodeRef::Kind::kHost) continue;
      if (d.to.kind != NodeRef::Kind::kHost) a.neighbours[d.from.index].push_back(d.to.index);
      if (d.to.kind == NodeRef::Kind::kHost) {
        a.attached[d.from.index].push_back(d.to.index);
        a.host_switches[d.to.index].push_back(d.from.index);
      }
    }
  });
  return adjacency_;
}

std::vector<std::uint32_t> Network::switches_reaching(const std::vector<HostId>& hosts) const {
  // Switches that reach every one of `hosts` directly or through one more switch (an
  // NVSwitch chip its GPUs; a rail switch the GPUs behind its NICs), in index order. Only
  // switches near the first host can: those it hangs off and their neighbours.
  std::vector<std::uint32_t> out;
  if (hosts.empty()) return out;
  const SwitchAdjacency& a = adjacency();
  std::vector<HostId> sorted = hosts;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<std::uint32_t> candidates;
  for (std::uint32_t s : a.host_switches[hosts.front()]) {
    candidates.push_back(s);
    candidates.insert(candidates.end(), a.neighbours[s].begin(), a.neighbours[s].end());
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<HostId> reach;
  const auto take = [&](std::uint32_t s) {
    for (HostId h : a.attached[s]) {
      if (std::binary_search(sorted.begin(), sorted.end(), h)) reach.push_back(h);
    }
  };
  for (std::uint32_t s : candidates) {
    reach.clear();
    take(s);
    for (std::uint32_t n : a.neighbours[s]) take(n);
    std::sort(reach.begin(), reach.end());
    reach.erase(std::unique(reach.begin(), reach.end()), reach.end());
    if (reach.size() == sorted.size()) out.push_back(s);
  }
  return out;
}

bool Network::can_reduce_in_network(const std::vector<HostId>& hosts) const {
  for (std::uint32_t s : switches_reaching(hosts)) {
    if (switches_[s].reduces()) return true;
  }
  return false;
}

std::optional<std::uint16_t> Network::multicast_group(const std::vector<HostId>& members) {
  if (auto it = multicast_ids_.find(members); it != multicast_ids_.end()) return it->second;
  const std::vector<std::uint32_t> reaching = switches_reaching(members);
  if (reaching.empty() || multicast_members_.size() > UINT16_MAX) return std::nullopt;
  const auto id = static_cast<std::uint16_t>(multicast_members_.size());
  std::vector<MulticastMember> addressed;
  for (HostId h : members) addressed.push_back({h, h < host_groups_.size() ? host_groups_[h] : 0});
  for (std::uint32_t s : reaching) switches_[s].add_multicast_group(id, addressed);
  multicast_members_.push_back(members);
  multicast_ids_.emplace(members, id);
  return id;
}

MessageId Network::add_multicast(HostId src, std::uint16_t group, std::int64_t bytes, std::uint8_t traffic_class,
                                 std::vector<MessageId>& receives) {
  const std::vector<HostId>& members = multicast_members_.at(group);
  // The sender's record; it is addressed to a member other than itself, whose ports are
  // the ones toward the switches that copy it.
  HostId toward = members.front();
  for (HostId h : members) {
    if (h != src) {
      toward = h;
      break;
    }
  }
  if (toward == src) throw std::invalid_argument("a multicast needs a member other than its sender");
  if (traffic_class >= params_.traffic_classes) throw std::invalid_argument("traffic class out of range");
  const std::uint32_t packets = packets_for(bytes, params_.nic.mtu);
  const MessageId id = messages_.add(src, toward, bytes, traffic_class, packets);
  Message& m = messages_[id];
  m.in_network = InNetwork::kMulticast;
  m.group = group;
  m.awaits_delivery = false;
  // The copies carry the sender's name for the message.
  open_member_receives(group, InNetwork::kMulticast, src, m.sequence, m.serial, bytes, traffic_class, receives);
  if (flow_model_ != nullptr) flow_multicast_receives_[id] = receives;
  return id;
}

void Network::open_member_receives(std::uint16_t group, InNetwork kind, HostId name_src, std::uint32_t name_sequence,
                                   std::uint64_t serial, std::int64_t bytes, std::uint8_t traffic_class, std::vector<MessageId>& receives) {
  const std::uint32_t packets = packets_for(bytes, params_.nic.mtu);
  receives.clear();
  for (HostId h : multicast_members_.at(group)) {
    const HostId record_src = name_src == kSumSource ? h : name_src;  // a sum has no one sender
    const MessageId r = messages_.add(record_src, h, bytes, traffic_class, packets, /*counted=*/false, serial);
    Message& rm = messages_[r];
    rm.in_network = kind;
    rm.group = group;
    rm.has_sender = false;
    rm.sequence = name_sequence;
    if (flow_model_ == nullptr) rm.recv_slot = nics_[h].open_in_network_receive(r, name_src, name_sequence, packets, /*by_name=*/true);
    receives.push_back(r);
  }
}

MessageId Network::add_contribution(HostId src, HostId owner, HostId via, std::uint16_t contributors,
                                    std::int64_t bytes, std::uint8_t traffic_class, std::uint32_t* sum_slot) {
  if (src >= nics_.size() || owner >= nics_.size() || via >= nics_.size() || via == src) throw std::invalid_argument("message endpoint out of range");
  if (traffic_class >= params_.traffic_classes) throw std::invalid_argument("traffic class out of range");
  const std::uint32_t packets = packets_for(bytes, params_.nic.mtu);
  const MessageId id = messages_.add(src, owner, bytes, traffic_class, packets);
  Message& m = messages_[id];
  m.in_network = InNetwork::kReduce;
  m.group = contributors;
  m.via = via;
  if (*sum_slot == kNoSum) {
    *sum_slot = flow_model_ != nullptr ? next_flow_sum_++
                                       : nics_[owner].open_in_network_receive(id, src, m.sequence, packets, /*by_name=*/false);
  } else {
    m.awaits_delivery = false;
  }
  m.recv_slot = *sum_slot;
  return id;
}

std::uint32_t Network::open_sum_for_all(std::uint16_t group, std::int64_t bytes, std::uint8_t traffic_class,
                                        std::vector<MessageId>& receives) {
  if (sums_opened_.size() <= group) sums_opened_.resize(static_cast<std::size_t>(group) + 1, 0);
  const std::uint32_t sum = sums_opened_[group]++;
  // The records take the serial of the message made last (a sum has no message of its own).
  const std::uint64_t created = messages_.created();
  open_member_receives(group, InNetwork::kReduceAll, kSumSource, sum, created > 0 ? created - 1 : 0, bytes, traffic_class,
                       receives);
  return sum;
}

MessageId Network::add_contribution_for_all(HostId src, std::uint16_t group, std::uint32_t sum, HostId via,
                                            std::int64_t bytes, std::uint8_t traffic_class) {
  if (src >= nics_.size() || via >= nics_.size() || via == src) throw std::invalid_argument("contribution endpoints out of range");
  const MessageId id = messages_.add(src, via, bytes, traffic_class, packets_for(bytes, params_.nic.mtu));
  Message& m = messages_[id];
  m.in_network = InNetwork::kReduceAll;
  m.group = group;
  m.recv_slot = sum;
  m.awaits_delivery = false;
  return id;
}

}  // namespace fabricsim
