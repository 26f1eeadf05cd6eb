#include "app/scenario/memory_estimate.h"

#include "app/workload/workload_kind.h"

#include "app/config/yaml_reader.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "sim/network.h"
#include "sim/parallel/process_group.h"
#include "sim/endpoint/transport_state.h"
#include "topologies/compile.h"
#include "topologies/routing.h"

namespace fabricsim {
namespace {

constexpr std::uint64_t kBase = 8ull << 20;  // measured: `fabricsim --version` peaks at 6.5 MB
// Per packet: the struct (its pool's free list runs through the free packets) and a
// queue slot (12 bytes in blocks of 20, 256 bytes; with the queues' part-filled blocks,
// about 16).
constexpr std::uint64_t kPerPacket = sizeof(Packet) + 2 * sizeof(Packet*);

std::uint64_t string_heap(const std::string& s) { return s.size() > 15 ? s.capacity() + 1 : 0; }

WorkloadNeeds workload_needs(const ScenarioConfig& config, const Topology& t) {
  const WorkloadKind* kind = find_workload_kind(config.workload.kind);
  return kind != nullptr ? kind->needs(config, t) : WorkloadNeeds{};
}

}  // namespace

MemoryEstimate estimate_memory(const ScenarioConfig& config, const Topology& t) {
  MemoryEstimate e;
  e.base = kBase;
  const std::uint64_t nodes = t.nodes().size();
  const std::uint64_t hosts = t.host_count();
  const std::uint64_t switches = t.switch_count();
  const std::uint64_t links = t.links().size();
  const std::uint64_t directions = 2 * links;

  // The graph: nodes with their names and roles, links with their tiers, the name index.
  for (const TopologyNode& n : t.nodes()) e.topology += sizeof(TopologyNode) + string_heap(n.name) + string_heap(n.role);
  for (const TopologyLink& l : t.links()) e.topology += sizeof(TopologyLink) + string_heap(l.tier);
  e.topology += nodes * 64;  // the name -> node hash map

  // The compiled network. Switch ports: how many link ends sit on switches.
  const NetworkConfig& n = config.network;
  const auto classes = static_cast<std::uint64_t>(n.traffic_classes);
  std::uint64_t switch_ports = 0;
  for (const TopologyLink& l : t.links()) {
    switch_ports += (t.node(l.a).kind == NodeKind::kSwitch) + (t.node(l.b).kind == NodeKind::kSwitch);
  }
  e.network = hosts * (sizeof(Nic) + 64) + switches * sizeof(Switch) +  // (the buffer is inline)
              directions * (sizeof(EgressPort) + sizeof(Link) + sizeof(LinkDirection) + 8 + classes * 48) +
              switch_ports * classes * 3 * sizeof(std::int64_t) * (n.lossless.shared_buffer ? 1 : 0) + nodes * 16;

  // Routes: a table per node with an entry per destination group where entries differ;
  // compiling holds the graph twice more (flat adjacency) and the per-group distances.
  const std::uint64_t groups = std::max<std::uint64_t>(1, route_group_count(t));
  e.routes = switches * groups * sizeof(std::uint32_t) + nodes * (sizeof(RouteTable) + 64) + hosts * 48 +
             (nodes + directions) * 40;

  // Packets in flight: each wire holds latency / serialization of a full packet, plus the
  // one in service; queues hold at most the buffers' room; and never more than the
  // workload has at once.
  const std::int64_t packet_bytes = std::int64_t{n.nic.mtu} + n.nic.header_bytes;
  std::uint64_t wire = 0;
  for (const TopologyLink& l : t.links()) {
    const Time ser = std::max<Time>(1, serialization(packet_bytes, l.bandwidth));
    wire += 2 * (static_cast<std::uint64_t>(l.latency / ser) + 2);
  }
  // A switch holds what its Ethernet ports queue (or its shared buffer), and from each
  // credit-based link at most the credits it granted (an endpoint holds none: it takes
  // what arrives at once).
  std::uint64_t ethernet_ports = 0, credited = 0;
  const NicConfig& nic = n.nic;
  for (const TopologyLink& l : t.links()) {
    const int switch_ends = (t.node(l.a).kind == NodeKind::kSwitch) + (t.node(l.b).kind == NodeKind::kSwitch);
    if (l.flow_control == FlowControl::kCredit) {
      credited += static_cast<std::uint64_t>(switch_ends) * classes * static_cast<std::uint64_t>(credit_bytes_for(l, nic) / packet_bytes + 1);
    } else {
      ethernet_ports += static_cast<std::uint64_t>(switch_ends);
    }
  }
  const std::uint64_t queue_room =
      credited + (n.lossless.shared_buffer
                      ? switches * static_cast<std::uint64_t>(n.lossless.buffer.size_bytes / packet_bytes)
                      : ethernet_ports * classes * static_cast<std::uint64_t>(std::min<std::int64_t>(n.queue_capacity, INT64_MAX / 2) / packet_bytes));
  const auto packets_of = [&](std::int64_t bytes) { return static_cast<std::uint64_t>(std::max<std::int64_t>(1, (bytes + n.nic.mtu - 1) / n.nic.mtu)); };
  std::uint64_t workload = 0;
  std::uint64_t prebuilt_messages = config.messages.size();
  for (const MessageConfig& m : config.messages) workload += packets_of(m.bytes);
  const WorkloadNeeds needs = workload_needs(config, t);
  workload += needs.packets;
  prebuilt_messages += needs.prebuilt_messages;
  e.messages += needs.message_bytes;
  e.packets_in_flight = std::min(workload, wire + queue_room);
  e.packets = e.packets_in_flight * kPerPacket;
  const bool flows = n.fidelity == NetworkConfig::Fidelity::kFlow;
  if (flows) {
    // No packets: a flow per message in flight instead (those made before the run may all
    // be at once; a workload's, a few per rank), with a weight, a member entry and its
    // place per link it crosses (about 16 links across a cluster, acks included).
    e.packets_in_flight = 0;
    e.packets = (prebuilt_messages > 0 ? prebuilt_messages : hosts * 8) * (sizeof(double) * 12 + 16 * 24);
    // A link per GPU each way for its NVLinks taken together (FlowModel::set_link_bundles).
    e.packets += hosts * 2 * 128;
  }
  // A message is a record, a receive slot at its destination and a send slot at its source.
  // (At flow fidelity the NICs keep no slots.)
  const std::uint64_t per_message = sizeof(Message) + (flows ? 0 : sizeof(RecvState) + sizeof(SendState));
  e.messages += prebuilt_messages * (per_message + 3 * sizeof(Time)) + hosts * 8 * per_message;
  // results.json: a record per link direction and per switch. `run` streams it to its file;
  // Python holds it as text (a growing string: up to twice its size).
  e.results = 2 * (directions * 420 + switches * 160 + hosts * 64);
  if (config.processes != nullptr && config.processes->size() > 1) {
    // Over MPI every process builds the whole network but holds only its partitions'
    // packets; at the end it gathers the others' counters, its own and one other's at a
    // time.
    const auto np = static_cast<std::uint64_t>(config.processes->size());
    e.packets_in_flight /= np;
    e.packets /= np;
    e.results += 2 * (directions * sizeof(PortCounters) + hosts * sizeof(NicCounters) + switches * sizeof(SwitchCounters)) / np;
  }
  return e;
}

std::string MemoryEstimate::describe() const {
  const auto gib = [](std::uint64_t b) { return static_cast<double>(b) / (1u << 30); };
  char buf[320];
  char moving[64];
  if (packets_in_flight == 0 && packets > 0) {
    std::snprintf(moving, sizeof moving, "flows %.2f", gib(packets));  // flow fidelity
  } else {
    std::snprintf(moving, sizeof moving, "packets %.2f for %llu in flight", gib(packets),
                  static_cast<unsigned long long>(packets_in_flight));
  }
  std::snprintf(buf, sizeof buf,
                "%.2f GiB (network %.2f, routes %.2f, topology %.2f, %s, messages %.2f, results %.2f, program %.2f)",
                gib(total()), gib(network), gib(routes), gib(topology), moving, gib(messages), gib(results), gib(base));
  return buf;
}

std::uint64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

}  // namespace fabricsim
