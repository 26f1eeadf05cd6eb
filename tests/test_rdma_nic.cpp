// A cluster's NICs as RDMA endpoints (`nic_model: rdma`): the GPU posts work requests,
// the NIC reads the payload over PCIe, keeps the queue pair's state, writes what arrives
// into the receiving GPU's memory and reports with completions. Values against hand counts.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "app/workload/collective_sweep.h"
#include "app/config/config_error.h"
#include "app/config/config_loader.h"
#include "app/output/flow_stats.h"
#include "app/scenario/scenario.h"
#include "test_support.h"

using namespace fabricsim;

namespace {

std::string cluster(const std::string& nic_link, int nodes, const std::string& rest) {
  return R"(
topology:
  kind: cluster
  nodes: )" + std::to_string(nodes) + R"(
  node: {preset: dgx_h100}
  nics_per_node: 8
  nic_model: rdma
  pcie: {bandwidth: 64GBps, latency: 500ns}
  nic: )" + nic_link + R"(
  fabric: {kind: rail_optimized, spines: 2, fabric_link: {bandwidth: 400Gbps, latency: 500ns}}
)" + rest;
}

NicCounters rdma_totals(const Network& net) { return net.rdma_nic_counters(); }

std::uint64_t drops(const Network& net, bool pcie_only) {
  std::uint64_t n = 0;
  for (const LinkDirection& d : net.directions()) {
    const bool pcie = (d.from.kind == NodeRef::Kind::kHost && d.to.kind == NodeRef::Kind::kNic) ||
                      (d.from.kind == NodeRef::Kind::kNic && d.to.kind == NodeRef::Kind::kHost);
    if (!pcie_only || pcie) n += d.port->counters().total.drops;
  }
  return n;
}

}  // namespace

TEST_CASE("an RDMA NIC's message: work request, DMA reads, the wire, DMA writes and completions, by hand") {
  ScenarioRun run(load_config_text(cluster("{bandwidth: 400Gbps, latency: 500ns, kind: infiniband}", 2,
                                           "network: {mtu: 4KiB, header_bytes: 64, ack_bytes: 64}\n"
                                           "messages:\n  - {src: n0.gpu0, dst: n1.gpu0, bytes: 1MiB}\n"),
                                   "rdma-one"));
  run.run();
  REQUIRE(run.complete());
  // Serializations: 64 B on PCIe (512 Gb/s) 1 ns, on the wire (400 Gb/s) 1.28 ns; a
  // 4160 B packet 65 ns on PCIe, 83.2 ns on the wire. Every link 500 ns.
  const double wqe_at_nic = 1 + 500;                   // the GPU's work request
  const double read_at_gpu = wqe_at_nic + 1 + 500;     // the NIC's first read (64 packets)
  const double first_in = read_at_gpu + 65 + 500;      // its first packet in NIC memory
  // PCIe brings packets faster than the wire takes them, and the reads keep 64 packets
  // ahead: the 256 packets leave back to back from the first one's arrival.
  const double last_out = first_in + 256 * 83.2;
  const double last_at_nic1 = last_out + 500 + 83.2 + 500;  // through rail0, store and forward
  // The last packet's DMA write (65 ns), then the completion behind it (1 ns).
  const double delivered = last_at_nic1 + 65 + 1 + 500;
  // The ack back through rail0 to n0.nic0, then its completion to n0.gpu0.
  const double finished = last_at_nic1 + 2 * (1.28 + 500) + 1 + 500;
  const Message& m = run.network().messages()[0];
  CHECK(static_cast<double>(m.delivered) / 1000 == within(delivered, 1e-9));
  CHECK(static_cast<double>(m.finished) / 1000 == within(finished, 1e-9));
  // The idle-path estimate behind results' slowdown counts the same trips: alone, 1.
  CHECK(summarize_flows(run, 0).slowdown.max == within(1.0, 1e-6));
  // The NIC did the transport, and the GPUs none of it.
  const NicCounters nic = rdma_totals(run.network());
  CHECK(nic.work_requests == 1);
  CHECK(nic.data_packets_sent == 256);
  CHECK(nic.read_packets == 256);
  CHECK(nic.data_packets_received == 256);
  CHECK(nic.dma_writes == 256);
  CHECK(nic.completions == 2);  // finished to n0.gpu0, delivered to n1.gpu0
  for (HostId h = 0; h < run.network().host_count(); ++h) {
    CHECK(run.network().nic(h).counters().data_packets_sent == 0);
    CHECK(run.network().nic(h).counters().acks_sent == 0);
  }
}

namespace {
// Two DGX-like nodes on 400G InfiniBand with 500 ns links, 4 KiB MTU and 64-byte headers
// and acks, at the given fidelity, running `messages` (YAML list items).
ScenarioRun two_node_infiniband_run(const std::string& fidelity, const std::string& messages, const std::string& name) {
  return ScenarioRun(load_config_text(cluster("{bandwidth: 400Gbps, latency: 500ns, kind: infiniband}", 2,
                                              "network: {mtu: 4KiB, header_bytes: 64, ack_bytes: 64, fidelity: " + fidelity +
                                                  "}\nmessages:\n" + messages),
                                      name));
}
}  // namespace

TEST_CASE("a queue pair's work requests go in order, and the next one reads only into the room the first leaves") {
  // Three 512 KiB messages n0.gpu0 -> n1.gpu0 posted at 0, 1 and 2 us: one queue pair.
  // The first goes alone at full speed; the next ones' reads wait until the first has
  // asked for all its payload, so PCIe is never shared with reads not yet needed and the
  // three leave as one stream of 384 packets. Flow fidelity's queue pairs (each flow in
  // turn, starting as the one before drains) give the same times.
  for (const std::string fidelity : {"packet", "flow"}) {
    CAPTURE(fidelity);
    ScenarioRun run = two_node_infiniband_run(fidelity,
                                              "  - {src: n0.gpu0, dst: n1.gpu0, bytes: 512KiB}\n"
                                              "  - {src: n0.gpu0, dst: n1.gpu0, bytes: 512KiB, start: 1us}\n"
                                              "  - {src: n0.gpu0, dst: n1.gpu0, bytes: 512KiB, start: 2us}\n",
                                              "rdma-queue-pair");
    run.run();
    REQUIRE(run.complete());
    // As in the hand count above: the first packet in NIC memory at 1567 ns, then 83.2 ns a
    // packet on the wire; each message's last packet through rail0, DMA-written, completed.
    const double first_in = 1 + 500 + 1 + 500 + 65 + 500;
    for (int i = 0; i < 3; ++i) {
      const double last_out = first_in + 128.0 * (i + 1) * 83.2;
      const double delivered = last_out + 500 + 83.2 + 500 + 65 + 1 + 500;
      CAPTURE(i);
      CHECK(static_cast<double>(run.network().messages()[static_cast<MessageId>(i)].delivered) / 1000 ==
            within(delivered, 1e-9));
    }
    if (fidelity == "packet") CHECK(rdma_totals(run.network()).read_packets == 384);  // each read once
  }
}

TEST_CASE("messages on different NCCL connections to one peer take different queue pairs and share the NIC") {
  // Two 512 KiB messages n0.gpu0 -> n1.gpu0 posted together, one on connection 1 (a
  // collective's channel), one on 0 (send/recv): two queue pairs, served round-robin, so
  // they leave interleaved and both are delivered about when one 1 MiB stream would be
  // (counted by hand above). On one queue pair the first would be delivered at 13.866 us.
  // Flow fidelity shares the wire between them evenly: both as the 1 MiB stream (its
  // second route comes from the pair's cache, on its own queue pair all the same).
  for (const std::string fidelity : {"packet", "flow"}) {
    CAPTURE(fidelity);
    ScenarioRun run = two_node_infiniband_run(fidelity,
                                              "  - {src: n0.gpu0, dst: n1.gpu0, bytes: 512KiB}\n"
                                              "  - {src: n0.gpu0, dst: n1.gpu0, bytes: 512KiB}\n",
                                              "rdma-connections");
    run.network().messages()[MessageId{1}].connection = 1;
    run.run();
    REQUIRE(run.complete());
    // In ns: the 256 packets leave back to back from 1567 ns, alternating; the last two
    // are one 83.2 ns wire time apart, the later one then delivered as the 1 MiB stream's.
    const double d0 = static_cast<double>(run.network().messages()[MessageId{0}].delivered) / 1000;
    const double d1 = static_cast<double>(run.network().messages()[MessageId{1}].delivered) / 1000;
    const double stream = 1 + 500 + 1 + 500 + 65 + 500 + 256 * 83.2 + 500 + 83.2 + 500 + 65 + 1 + 500;
    if (fidelity == "packet") {
      CHECK(std::max(d0, d1) == within(stream, 1e-9));
      CHECK(std::abs(d0 - d1) == within(83.2, 1e-9));
    } else {
      CHECK(d0 == within(stream, 1e-6));
      CHECK(d1 == within(stream, 1e-6));
    }
  }
}

TEST_CASE("loss on the wire is recovered by the sending NIC, which reads the GPU's memory again") {
  // Two senders of different nodes on one rail into n2.gpu0, over Ethernet with 64 KiB
  // queues: the rail leaf's port to n2.nic0 drops. Go-back-N runs at the NICs.
  ScenarioRun run(load_config_text(cluster("{bandwidth: 400Gbps, latency: 500ns}", 3,
                                           "network: {mtu: 4KiB, header_bytes: 64, queue_capacity: 64KiB}\n"
                                           "messages:\n"
                                           "  - {src: n0.gpu0, dst: n2.gpu0, bytes: 4MiB}\n"
                                           "  - {src: n1.gpu0, dst: n2.gpu0, bytes: 4MiB}\n"),
                                   "rdma-loss"));
  run.run();
  REQUIRE(run.complete());
  const NicCounters nic = rdma_totals(run.network());
  CHECK(drops(run.network(), false) > 0);
  CHECK(drops(run.network(), true) == 0);  // PCIe never drops
  CHECK(nic.retransmitted_packets > 0);
  // Each of the 2 x 1024 packets is written into n2.gpu0's memory exactly once.
  CHECK(nic.data_packets_received == 2048);
  CHECK(nic.dma_writes == 2048);
  CHECK(run.network().nic(0).counters().retransmitted_packets == 0);
  // Every packet on the wire was read from the GPU first (a resend is read again).
  CHECK(nic.read_packets >= nic.data_packets_sent);
  CHECK(nic.data_packets_sent == 2048 + nic.retransmitted_packets);
  for (const Message& m : run.network().messages().all()) CHECK(m.finished > 0);
}

TEST_CASE("a one-channel ring AllReduce through RDMA NICs: no drops, busbw at the NIC's payload rate") {
  // nccl-tests' busbw of a ring is bounded by one NIC per node per channel: 50 GB/s of
  // wire, 4096 of each 4160 bytes payload = 49.23 GB/s.
  ScenarioRun run(load_config_text(cluster("{bandwidth: 400Gbps, latency: 500ns, kind: infiniband}", 2,
                                           "network: {mtu: 4KiB, header_bytes: 64}\n"
                                           "workload: {kind: collective, op: all_reduce, algorithm: ring, channels: 1,\n"
                                           "           sizes: {from: 256MiB, to: 256MiB}, check_data: false}\n"),
                                   "rdma-ring"));
  run.run();
  REQUIRE(run.complete());
  const CollectiveRow& row = run.collective()->rows()[0];
  const double bound = 50.0 * 4096 / 4160;
  MESSAGE("1 channel, 256 MiB: busbw " << row.busbw_GBps << " GB/s against " << bound);
  CHECK(row.busbw_GBps <= bound);
  CHECK(row.busbw_GBps == within(bound, 0.03));
  CHECK(drops(run.network(), false) == 0);
  CHECK(rdma_totals(run.network()).retransmitted_packets == 0);
}

TEST_CASE("nic_model: relay keeps the NIC a relaying switch, and the GPU the transport endpoint") {
  ScenarioRun run(load_config_text(R"(
topology:
  kind: cluster
  nodes: 2
  node: {preset: dgx_h100}
  nics_per_node: 8
  nic_model: relay
  pcie: {bandwidth: 64GBps, latency: 500ns}
  nic: {bandwidth: 400Gbps, latency: 500ns, kind: infiniband}
  fabric: {kind: rail_optimized, spines: 2, fabric_link: {bandwidth: 400Gbps, latency: 500ns}}
network: {mtu: 4KiB, header_bytes: 64, ack_bytes: 64}
messages:
  - {src: n0.gpu0, dst: n1.gpu0, bytes: 1MiB}
)",
                                   "relay-one"));
  run.run();
  REQUIRE(run.complete());
  CHECK(run.network().rdma_nic_count() == 0);
  CHECK(run.network().nic(0).counters().data_packets_sent == 256);
  // The GPU's packets cross PCIe (65 ns each, 500 ns) to n0.nic0, whose wire (83.2 ns a
  // packet) is the bottleneck: the last leaves it at 65 + 500 + 256 x 83.2 ns; then
  // rail0 (500 ns, 83.2 ns on) and n1.nic0 (500 ns, 65 ns on PCIe, 500 ns).
  const double last_out = 65 + 500 + 256 * 83.2;
  const double delivered = last_out + 500 + 83.2 + 500 + 65 + 500;
  CHECK(static_cast<double>(run.network().messages()[0].delivered) / 1000 == within(delivered, 1e-9));
}

TEST_CASE("a work request waiting its turn longer than the retransmission timeout neither spins nor times out") {
  // Two messages on one queue pair (n0.gpu0 -> n1.gpu0): the second waits behind the
  // first (16 MiB, 4096 packets at 83.2 ns = 341 us) ten times the 30 us timer. Nothing
  // is outstanding while it waits, so no timer may fire for it, nor may its first packet
  // be taken for lost; and the run takes its usual handful of events per packet.
  ScenarioRun run(load_config_text(cluster("{bandwidth: 400Gbps, latency: 500ns, kind: infiniband}", 2,
                                           "network: {mtu: 4KiB, header_bytes: 64, retransmit_timeout: 30us}\n"
                                           "messages:\n"
                                           "  - {src: n0.gpu0, dst: n1.gpu0, bytes: 16MiB}\n"
                                           "  - {src: n0.gpu0, dst: n1.gpu0, bytes: 1MiB}\n"),
                                   "rdma-wait"));
  run.run();
  REQUIRE(run.complete());
  NicCounters all;
  for (std::uint32_t s = 0; s < run.network().switch_count(); ++s) {
    if (run.network().is_rdma_nic(s)) all.timeouts += run.network().rdma_nic(s).counters().timeouts;
  }
  CHECK(all.timeouts == 0);
  CHECK(rdma_totals(run.network()).retransmitted_packets == 0);
  CHECK(run.events() < 40u * (4096 + 256));
  // In order: the second starts on the wire when the first's last packet has left.
  const Message& first = run.network().messages()[0];
  const Message& second = run.network().messages()[1];
  CHECK(second.delivered > first.delivered);
  CHECK(to_us(second.delivered - first.delivered) == within(256 * 0.0832, 0.01));
}
