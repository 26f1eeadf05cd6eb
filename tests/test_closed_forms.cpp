// Packet timings against closed forms worked out by hand, exact to the picosecond.
//
// Definitions used throughout (docs/model.md says the same):
//   packets   n = ceil(S / mtu); packet i carries min(mtu, S - i*mtu) payload bytes
//   wire      payload + header_bytes per data packet; ack_bytes per acknowledgement
//   ser(b)    ceil(b * 8 * 1e12 / rate) picoseconds
//   delivered the last bit of the last packet reaches the destination NIC
//   finished  the acknowledgement of the last packet reaches the source NIC
#include <doctest/doctest.h>

#include "test_support.h"

#include <memory>
#include <string>

#include "sim/network.h"
#include "topologies/compile.h"

using namespace fabricsim;

namespace {

constexpr std::uint32_t kMtu = 4096;
constexpr std::uint32_t kHeader = 64;
constexpr std::uint32_t kAck = 64;

NetworkOptions options(LoadBalancing lb = LoadBalancing::kEcmp) {
  NetworkOptions o;
  o.params.nic.mtu = kMtu;
  o.params.nic.header_bytes = kHeader;
  o.params.nic.ack_bytes = kAck;
  o.params.load_balancing = lb;
  return o;
}

// h0 - s1 - ... - s(h-1) - h1: a chain of `links` equal links.
Topology chain(int links, Bandwidth bw, Time latency) {
  Topology t;
  const auto a = t.add_host("a");
  const auto b = t.add_host("b");
  auto prev = a;
  for (int i = 1; i < links; ++i) {
    const auto s = t.add_switch("s" + std::to_string(i));
    t.connect(prev, s, bw, latency, "chain");
    prev = s;
  }
  t.connect(prev, b, bw, latency, "chain");
  return t;
}

struct Run {
  Simulator sim{1};
  std::unique_ptr<Network> net;
  explicit Run(const Topology& t, const NetworkOptions& o = options()) { net = compile_network(t, sim, o); }
  MessageId send(HostId src, HostId dst, std::int64_t bytes) {
    const MessageId id = net->add_message(src, dst, bytes);
    net->post(id);
    return id;
  }
  const Message& msg(MessageId id) { return net->messages()[id]; }
};

}  // namespace

TEST_CASE("one message over one link: sum of packet serializations plus propagation") {
  const Bandwidth bw = Bandwidth::gbps(100);
  const Time latency = us(1);
  Run r(chain(1, bw, latency));
  // 10000 B = 4096 + 4096 + 1808 payload -> wire 4160, 4160, 1872 bytes.
  const MessageId id = r.send(0, 1, 10'000);
  r.sim.run();
  CHECK(r.msg(id).packets == 3);
  // At 100 Gb/s a byte takes 80 ps: 4160 B -> 332800 ps, 1872 B -> 149760 ps.
  const Time delivered = 332'800 + 332'800 + 149'760 + 1'000'000;
  CHECK(r.msg(id).delivered == delivered);
  // The last ack: 64 B -> 5120 ps, then 1 us back.
  CHECK(r.msg(id).finished == delivered + 5'120 + 1'000'000);
  CHECK(r.net->directions()[0].port->counters().total.bytes_sent == 4160 + 4160 + 1872);
  CHECK(r.net->directions()[1].port->counters().total.packets_sent == 3);  // three acks back
}

TEST_CASE("one message over one link at a rate that does not divide evenly") {
  // 7 Gb/s: ser(4160) = ceil(4160*8/7e9 s) = ceil(4754285.71 ps) = 4754286 ps;
  // ser(64) = ceil(73142.86) = 73143 ps. S = 3 full packets.
  Run r(chain(1, Bandwidth::gbps(7), ns(250)));
  const MessageId id = r.send(0, 1, 3 * kMtu);
  r.sim.run();
  const Time delivered = 3 * 4'754'286 + 250'000;
  CHECK(r.msg(id).delivered == delivered);
  CHECK(r.msg(id).finished == delivered + 73'143 + 250'000);
}

TEST_CASE("store-and-forward chain: T = (n + h - 1) * packet_time + h * propagation") {
  const Bandwidth bw = Bandwidth::gbps(400);  // 20 ps per byte
  const Time latency = ns(300);
  for (int h : {1, 2, 3, 5, 8}) {
    CAPTURE(h);
    Run r(chain(h, bw, latency));
    const int n = 64;
    const MessageId id = r.send(0, 1, std::int64_t{n} * kMtu);
    r.sim.run();
    const Time packet_time = (kMtu + kHeader) * 20;  // 83200 ps
    const Time delivered = (n + h - 1) * packet_time + h * latency;
    CHECK(r.msg(id).delivered == delivered);
    // The final ack crosses the same h links back, store-and-forward: h * (64 B * 20 ps + latency).
    CHECK(r.msg(id).finished == delivered + h * (kAck * 20 + latency));
  }
}

TEST_CASE("two long flows on one bottleneck each get half of it") {
  // a and b send into switch s, which forwards both to c over one link of the same rate.
  // Flow A carries S bytes and flow B 2S, both from time 0. Sharing equally, A's last
  // packet leaves the bottleneck after 2 * n_A packet times and B's after 3 * n_A.
  Topology t;
  const auto a = t.add_host("a"), b = t.add_host("b"), c = t.add_host("c");
  const auto s = t.add_switch("s");
  const Bandwidth bw = Bandwidth::gbps(100);
  t.connect(a, s, bw, ns(100), "x");
  t.connect(b, s, bw, ns(100), "x");
  t.connect(s, c, bw, ns(100), "x");
  Run r(t);
  const std::int64_t n_a = 2000;
  const MessageId fa = r.send(0, 2, n_a * kMtu);
  const MessageId fb = r.send(1, 2, 2 * n_a * kMtu);
  r.sim.run();
  const double packet_time = (kMtu + kHeader) * 80.0;
  const double share_a = static_cast<double>(n_a) * packet_time / static_cast<double>(r.msg(fa).delivered);
  // B sent n_a packets while A was active and the rest alone.
  const double b_alone = static_cast<double>(r.msg(fb).delivered - r.msg(fa).delivered);
  const double share_b = static_cast<double>(n_a) * packet_time / (static_cast<double>(r.msg(fb).delivered) - b_alone);
  CHECK(share_a == within(0.5, 0.01));
  CHECK(share_b == within(0.5, 0.01));
  // And B, alone afterwards, runs at the full rate: n_a more packets in n_a packet times.
  CHECK(b_alone == within(n_a * packet_time, 0.01));
  CHECK(r.net->directions()[4].port->counters().total.drops == 0);
}

TEST_CASE("tail drop with go-back-N: drops are resent and every byte arrives exactly once") {
  // Two senders into one port whose queue holds 3 packets: the queue must overflow.
  Topology t;
  const auto a = t.add_host("a"), b = t.add_host("b"), c = t.add_host("c");
  const auto s = t.add_switch("s");
  for (auto h : {a, b}) t.connect(h, s, Bandwidth::gbps(100), ns(100), "x");
  t.connect(s, c, Bandwidth::gbps(100), ns(100), "x");
  NetworkOptions o = options();
  o.switch_queue_capacity_bytes = 3 * (kMtu + kHeader);
  Run r(t, o);
  const MessageId fa = r.send(0, 2, 100 * kMtu);
  const MessageId fb = r.send(1, 2, 100 * kMtu);
  r.sim.run();
  const PortCounters& bottleneck = r.net->directions()[4].port->counters();
  CHECK(bottleneck.total.drops > 0);
  CHECK(bottleneck.total.max_queue_bytes <= 3 * (kMtu + kHeader));
  CHECK(r.net->nic(0).counters().retransmitted_packets + r.net->nic(1).counters().retransmitted_packets > 0);
  CHECK(r.msg(fa).finished > 0);
  CHECK(r.msg(fb).finished > 0);
  // Exactly once: 200 distinct packets and 200 * 4096 payload bytes, duplicates aside.
  CHECK(r.net->nic(2).counters().data_packets_received == 200);
  CHECK(r.net->nic(2).counters().payload_bytes_received == 200 * kMtu);
  CHECK(r.sim.packets().in_use() == 0);  // every packet freed exactly once
}

TEST_CASE("packet spraying spreads one flow over all equal-cost paths") {
  // Two leaves joined by 4 spines; one flow from a host on leaf 0 to one on leaf 1.
  Topology t;
  const auto a = t.add_host("a"), b = t.add_host("b");
  const auto l0 = t.add_switch("l0"), l1 = t.add_switch("l1");
  t.connect(a, l0, Bandwidth::gbps(400), ns(100), "host");
  t.connect(b, l1, Bandwidth::gbps(400), ns(100), "host");
  for (int i = 0; i < 4; ++i) {
    const auto sp = t.add_switch("sp" + std::to_string(i));
    t.connect(l0, sp, Bandwidth::gbps(100), ns(100), "fabric");
    t.connect(sp, l1, Bandwidth::gbps(100), ns(100), "fabric");
  }
  for (LoadBalancing lb : {LoadBalancing::kEcmp, LoadBalancing::kSpray}) {
    Run r(t, options(lb));
    const MessageId id = r.send(0, 1, 4000 * kMtu);
    r.sim.run();
    REQUIRE(r.msg(id).finished > 0);
    int used = 0;
    for (const LinkDirection& d : r.net->directions()) {
      if (d.from.kind == NodeRef::Kind::kSwitch && d.from.index == 0 && d.to.kind == NodeRef::Kind::kSwitch &&
          d.port->counters().total.packets_sent > 500) {
        ++used;
      }
    }
    // ECMP pins the flow to one 100G uplink; spraying uses all four (~1000 packets each).
    CHECK(used == (lb == LoadBalancing::kEcmp ? 1 : 4));
  }
}
