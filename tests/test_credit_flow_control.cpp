// Credit-based link-level flow control (InfiniBand, PCIe, NVLink) against hand counts.
#include <doctest/doctest.h>

#include "app/config/config_loader.h"
#include "app/scenario/scenario.h"
#include "test_support.h"

using namespace fabricsim;

namespace {

struct Totals {
  std::uint64_t drops = 0, pauses = 0, retransmits = 0;
  Time last_finish = 0;
};

Totals totals(const ScenarioRun& run) {
  Totals t;
  for (const LinkDirection& d : run.network().directions()) {
    t.drops += d.port->counters().total.drops;
    t.pauses += d.port->counters().total.pauses_sent + d.port->counters().total.pauses_received;
  }
  for (HostId h = 0; h < run.network().host_count(); ++h) t.retransmits += run.network().nic(h).counters().retransmitted_packets;
  for (const Message& m : run.network().messages().all()) t.last_finish = std::max(t.last_finish, m.finished);
  return t;
}

}  // namespace

TEST_CASE("a credit loop shorter than the link's round trip limits the rate to credits per round trip") {
  // a - b, one InfiniBand link, 100 Gb/s, 1 us, 2 packets of credit (2 x 4160 B). A
  // 4160 B packet takes 332.8 ns; b frees its buffer on arrival, and the credit is back
  // at a 1 us later. So packets go in pairs, one pair per 332.8 + 2000 ns:
  // packet k starts at floor(k/2) * 2332.8 + (k%2) * 332.8 ns. Of 100 packets the last
  // starts at 49 * 2332.8 + 332.8 = 114640 ns, arrives at 114640 + 332.8 + 1000 =
  // 115972.8 ns; its 64 B ack (5.12 ns) is back at 116977.92 ns.
  ScenarioRun run(load_config_text(R"(
topology:
  kind: custom
  hosts: [a, b]
  links:
    - {a: a, b: b, bandwidth: 100Gbps, latency: 1us, kind: infiniband, credits: 8320B}
network: {mtu: 4KiB, header_bytes: 64, ack_bytes: 64}
messages:
  - {src: a, dst: b, bytes: 409600}
)",
                                   "credit-loop"));
  run.run();
  REQUIRE(run.complete());
  const Message& m = run.network().messages()[0];
  CHECK(m.delivered == 115'972'800);
  CHECK(m.finished == 116'977'920);
  const Totals t = totals(run);
  CHECK(t.drops == 0);
  CHECK(t.pauses == 0);
  // a waited for credits between pairs: 49 waits of 2332.8 - 665.6 = 1667.2 ns.
  const PortCounters& c = run.network().directions()[0].port->counters();
  CHECK(c.per_class[0].credit_wait_time == 49 * 1'667'200);
}

TEST_CASE("incast 16 to 1 over InfiniBand: no drops, no PAUSE frames, finished at the line-rate bound") {
  // 17 hosts on one switch, 100 Gb/s InfiniBand, 1 us links, no shared buffer, no PFC.
  // The switch's egress queue toward the receiver holds whatever the credits let in.
  ScenarioRun run(load_config_text(incast_yaml("  queue_capacity: 64KiB\n", ", kind: infiniband"), "ib-incast"));
  run.run();
  REQUIRE(run.complete());
  const Totals t = totals(run);
  CHECK(t.drops == 0);
  CHECK(t.pauses == 0);
  CHECK(t.retransmits == 0);
  // Bound: 16 x 256 packets of 4160 B through the receiver's 100 Gb/s link
  // (1363.1488 us), after one packet's serialization at the sender (0.3328 us) and two
  // 1 us links; the last ack (64 B) comes back over two links: + 2 x (5.12 ns + 1 us).
  const double bound_us = 16 * 256 * 4160 * 8 / 100e9 * 1e6 + 0.3328 + 2 + 2 * (0.00512 + 1);
  MESSAGE("InfiniBand incast: " << to_us(t.last_finish) << " us against the bound " << bound_us << " us");
  CHECK(to_us(t.last_finish) >= bound_us - 1e-6);
  CHECK(to_us(t.last_finish) == within(bound_us, 0.02));
}

TEST_CASE("PCIe and NVLink never drop: 8 GiB from a GPU through a NIC faster in than out, and over NVLink") {
  // PCIe (64 GB/s) feeds a 400 Gb/s (50 GB/s) Ethernet NIC whose wire queue holds only
  // 1 MiB. Without PCIe credits the relaying NIC overflowed at this size. With them, its
  // wire queue never holds more than the PCIe link's credits: 2 x 64 GB/s x 500 ns + 4
  // packets = 64000 + 33280 = 97280 B. An RDMA NIC sends only what its queue pair pulls
  // (its wire queue holds acks at most), and writes into the GPU at PCIe's faster rate.
  // Either way the message runs at the wire's rate.
  for (const std::string model : {"relay", "rdma"}) {
    CAPTURE(model);
    ScenarioRun run(load_config_text(R"(
topology:
  kind: cluster
  nodes: 2
  node: {preset: dgx_h100}
  nics_per_node: 8
  nic_model: )" + model + R"(
  pcie: {bandwidth: 64GBps, latency: 500ns}
  nic: {bandwidth: 400Gbps, latency: 500ns}
  fabric: {kind: rail_optimized, spines: 1, fabric_link: {bandwidth: 400Gbps, latency: 500ns}}
network: {mtu: 4KiB, header_bytes: 64, queue_capacity: 1MiB, ack_interval: 8}
messages:
  - {src: n0.gpu0, dst: n1.gpu0, bytes: 8GiB}
  - {src: n0.gpu1, dst: n0.gpu2, bytes: 8GiB}
)",
                                     "pcie-8g"));
    run.run();
    REQUIRE(run.complete());
    const Totals t = totals(run);
    CHECK(t.drops == 0);
    CHECK(t.retransmits == 0);
    std::int64_t nic_wire_queue = 0, nic_queue = 0;
    for (const LinkDirection& d : run.network().directions()) {
      if (d.from.kind == NodeRef::Kind::kSwitch && d.port->bandwidth() == Bandwidth::gbps(400) && !d.port->credit_based()) {
        nic_wire_queue = std::max(nic_wire_queue, d.port->counters().total.max_queue_bytes);
      }
      if (d.from.kind == NodeRef::Kind::kNic) nic_queue = std::max(nic_queue, d.port->counters().total.max_queue_bytes);
    }
    if (model == "relay") {
      CHECK(nic_wire_queue <= 97'280);
    } else {
      CHECK(run.network().rdma_nic_count() == 16);
      CHECK(nic_queue <= 2 * 4160);  // a DMA write behind another, or an ack
    }
    // The inter-node message at the wire's rate: 2^21 packets of 4160 B at 50 GB/s.
    const double wire_s = 2097152.0 * 4160 / 50e9;
    CHECK(to_seconds(run.network().messages()[0].finished) == within(wire_s, 0.005));
  }
}

namespace {

// a - s - b, 1 MiB, the given link and network settings.
ScenarioRun& run_one_message(std::unique_ptr<ScenarioRun>& holder, const std::string& link, const std::string& network) {
  holder = std::make_unique<ScenarioRun>(load_config_text(R"(
topology:
  kind: custom
  hosts: [a, b]
  switches: [s]
  links:
    - {a: a, b: s, )" + link + R"(}
    - {a: s, b: b, )" + link + R"(}
network: {mtu: 4KiB, header_bytes: 64, ack_bytes: 64)" + network + R"(}
messages:
  - {src: a, dst: b, bytes: 1MiB}
)",
                                                          "timer"));
  holder->run();
  return *holder;
}

}  // namespace

TEST_CASE("a retransmission timer shorter than the round trip backs off instead of resending forever") {
  std::unique_ptr<ScenarioRun> holder;
  SUBCASE("200 ns timer on 1 us links") {
    // Round trip about 4.7 us (two 1 us links each way, a packet and an ack): the timer
    // doubles 200 ns -> 6.4 us in 5 timeouts and then holds.
    ScenarioRun& run = run_one_message(holder, "bandwidth: 100Gbps, latency: 1us", ", retransmit_timeout: 200ns");
    REQUIRE(run.complete());
    CHECK(run.network().nic(0).counters().timeouts <= 6);
    CHECK(run.network().nic(1).counters().payload_bytes_received == 1048576);
  }
  SUBCASE("2 Mbps links: one packet takes 16.6 ms, longer than the 10 ms timer") {
    // 256 packets of 4160 B at 2 Mb/s take 4.26 s on the first link; the timer doubles
    // once or twice, costing a packet or two of resends.
    ScenarioRun& run = run_one_message(holder, "bandwidth: 2Mbps, latency: 1us", "");
    REQUIRE(run.complete());
    const double bound_s = 257 * 4160 * 8 / 2e6;
    CHECK(to_seconds(run.network().messages()[0].finished) == within(bound_s, 0.02));
    CHECK(run.network().nic(0).counters().timeouts <= 3);
  }
  SUBCASE("1000 s links") {
    // Round trip 4000 s. The n-th timeout comes at 10 ms x (2^n - 1) (each doubles the
    // timer): 18 of them before the first ack (2^18 - 1 = 262143 x 10 ms = 2621 s; the
    // 19th would be at 5243 s), none after (the acks all arrive within microseconds).
    ScenarioRun& run = run_one_message(holder, "bandwidth: 100Gbps, latency: 1000s", "");
    REQUIRE(run.complete());
    CHECK(run.network().nic(0).counters().timeouts == 18);
    CHECK(run.network().nic(1).counters().payload_bytes_received == 1048576);
  }
}

TEST_CASE("progress undoes the retransmission backoff: a lossy burst costs one timer per stall, not a doubling each") {
  // 400G into 100G through a 64 KiB queue, no congestion control: each burst delivers
  // about 64 KiB / (1 - 100/400) and the rest is dropped; the resent gap is often dropped
  // again and the copies after it arrive as duplicates (plain acks), so the sender waits
  // for its 100 us timer. With the backoff undone by each advancing ack, every stall costs
  // one timer plus a round trip; the run is bounded by that per timeout plus every packet
  // sent serialized at the bottleneck. (A backoff that only grew waited 100 us x 2^30.)
  std::unique_ptr<ScenarioRun> holder = std::make_unique<ScenarioRun>(load_config_text(R"(
topology:
  kind: custom
  hosts: [a, b]
  switches: [s]
  links:
    - {a: a, b: s, bandwidth: 400Gbps, latency: 1us}
    - {a: s, b: b, bandwidth: 100Gbps, latency: 1us}
network: {mtu: 4KiB, queue_capacity: 64KiB, retransmit_timeout: 100us}
messages:
  - {src: a, dst: b, bytes: 4MiB}
)",
                                                                                    "burst_backoff"));
  ScenarioRun& run = *holder;
  run.run();
  REQUIRE(run.complete());
  const auto& sender = run.network().nic(0).counters();
  REQUIRE(sender.timeouts > 10);  // the stalls happen
  const double round_trip_us = 4 + 2 * 64 * 1024 * 8 / 100e3;  // four 1 us hops, a full queue each way
  const double packet_us = (4096 + 64) * 8 / 100e3;           // a packet and its header at 100G
  const double bound_us = static_cast<double>(sender.timeouts) * (100 + round_trip_us) +
                          static_cast<double>(sender.data_packets_sent) * packet_us;
  CHECK(to_seconds(run.network().messages()[0].finished) * 1e6 < bound_us);
  CHECK(run.network().nic(1).counters().payload_bytes_received == 4194304);
}

TEST_CASE("a late ack for a reused send slot is told apart by its sequence, and a late data packet is answered") {
  // a sends two messages to c in turn: the second reuses the first's send slot at a. An
  // ack carrying the first's sequence for that slot is a late answer to the finished one:
  // it must change nothing. And a data packet of a message c received whole (its receive
  // slot let go) is answered with an ack for all of it, so its sender can always finish.
  ScenarioRun run(load_config_text(R"(
topology:
  kind: custom
  hosts: [a, b, c]
  switches: [s]
  links:
    - {a: a, b: s, bandwidth: 100Gbps, latency: 1us}
    - {a: b, b: s, bandwidth: 100Gbps, latency: 1us}
    - {a: c, b: s, bandwidth: 100Gbps, latency: 1us}
messages:
  - {src: a, dst: c, bytes: 40KiB}
  - {src: a, dst: c, bytes: 40KiB, start: 100us}
)",
                                   "late-ack"));
  Network& net = const_cast<Network&>(run.network());
  Simulator& sim = const_cast<Simulator&>(run.sim());
  REQUIRE(net.messages()[0].sequence == 0);
  REQUIRE(net.messages()[1].sequence == 1);
  sim.run(us(101));  // the first finished; the second is under way in the same send slot
  REQUIRE(net.messages()[0].finished > 0);
  REQUIRE(net.messages()[1].finished < 0);
  Packet* ack = sim.packets().allocate();
  ack->kind = PacketKind::kAck;
  ack->message = 0;   // a's send slot 0, now the second message's
  ack->sequence = 0;  // but the first's name
  ack->src = 2;
  ack->dst = 0;
  ack->seq = 10;      // "all ten packets": for the second, a lie
  ack->wire_bytes = 64;
  net.nic(0).receive(ack, 0);
  Packet* late = sim.packets().allocate();
  late->kind = PacketKind::kData;
  late->message = 0;
  late->recv_slot = net.messages()[0].recv_slot;
  late->sequence = 0;
  late->src = 0;
  late->dst = 2;
  late->seq = 3;
  late->payload = 4096;
  late->wire_bytes = 4160;
  const std::uint64_t acks_before = net.nic(2).counters().acks_sent;
  net.nic(2).receive(late, 0);
  CHECK(net.nic(2).counters().acks_sent == acks_before + 1);  // answered: all of it is here
  run.run();
  REQUIRE(run.complete());
  CHECK(net.nic(0).counters().retransmitted_packets == 0);
  CHECK(net.nic(2).counters().payload_bytes_received == 2 * 40960);  // the lie changed nothing
}
