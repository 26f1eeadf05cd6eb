// The lossless fabric against the bounds and behaviours RoCE fabrics are known for.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>

#include "app/config/config_loader.h"
#include "app/output/flow_stats.h"
#include "app/scenario/scenario.h"
#include "sim/net/ecn_marker.h"
#include "test_support.h"

using namespace fabricsim;

namespace {

struct RunFacts {
  Time last_finish = 0;
  std::uint64_t drops = 0, pauses = 0, retransmits = 0, distinct_payload = 0, messages = 0;
  bool complete = false;
};

RunFacts run_facts(const std::string& yaml) {
  ScenarioRun run(load_config_text(yaml, "test"));
  run.run();
  RunFacts f;
  f.complete = run.complete();
  for (const Message& m : run.network().messages().all()) f.last_finish = std::max(f.last_finish, m.finished);
  for (const LinkDirection& d : run.network().directions()) {
    f.drops += d.port->counters().total.drops;
    f.pauses += d.port->counters().total.pauses_sent;
  }
  for (HostId h = 0; h < run.network().host_count(); ++h) {
    f.retransmits += run.network().nic(h).counters().retransmitted_packets;
    f.distinct_payload += run.network().nic(h).counters().payload_bytes_received;
  }
  f.messages = run.network().messages().size();
  return f;
}

}  // namespace

TEST_CASE("incast 16 to 1 with PFC: no drops, pauses, and completion at the bottleneck bound") {
  const RunFacts f = run_facts(incast_yaml(R"(  buffer: {size: 4MiB, alpha: 0.125}
  pfc: {}
)"));
  CHECK(f.complete);
  CHECK(f.drops == 0);
  CHECK(f.pauses > 0);
  // Bound: 16 MiB through the receiver's 100 Gb/s link, plus one path latency (two 1 us
  // links): 16 * 1048576 * 8 / 100e9 s = 1342.177 us, + 2 us = 1344.177 us.
  const double bound_us = 16 * 1048576 * 8 / 100e9 * 1e6 + 2;
  MESSAGE("incast with PFC: " << to_us(f.last_finish) << " us against the bound " << bound_us << " us; pauses " << f.pauses);
  CHECK(to_us(f.last_finish) >= bound_us);
  CHECK(to_us(f.last_finish) == within(bound_us, 0.03));
}

TEST_CASE("incast 16 to 1 without PFC and a 1 MiB buffer: drops, resends, every byte exactly once, later") {
  const RunFacts lossy = run_facts(incast_yaml("  buffer: {size: 1MiB}\n"));
  const RunFacts lossless = run_facts(incast_yaml(R"(  buffer: {size: 4MiB, alpha: 0.125}
  pfc: {}
)"));
  MESSAGE("incast without PFC: " << to_us(lossy.last_finish) << " us, drops " << lossy.drops << ", resent "
                                 << lossy.retransmits);
  CHECK(lossy.complete);
  CHECK(lossy.drops > 0);
  CHECK(lossy.retransmits > 0);
  CHECK(lossy.distinct_payload == 16u * 1048576u);  // each byte once, resends aside
  CHECK(lossy.last_finish > lossless.last_finish);
}

TEST_CASE("ECN marking follows the RED line within 3 standard errors at three queue lengths") {
  // A port whose class is paused holds its queue at q bytes; zero-byte probes then see
  // exactly q on enqueue, through the same marking path switches use.
  EcnConfig ecn;
  ecn.enabled = true;
  ecn.kmin_bytes = 20'000;
  ecn.kmax_bytes = 200'000;
  ecn.pmax = 0.2;
  for (const std::int64_t q : {65'000, 110'000, 155'000}) {
    CAPTURE(q);
    Simulator sim(1);
    Rng rng(1);
    EgressPort port(sim, Bandwidth::gbps(100), 1, EgressPort::kUnlimited);
    port.set_ecn(&ecn, &rng);
    port.set_paused(0, true);
    const auto packet = [&](std::uint32_t bytes) {
      Packet* p = sim.packets().allocate();
      *p = Packet{};
      p->wire_bytes = bytes;
      p->ecn = kEcnCapable;
      return p;
    };
    for (std::int64_t held = 0; held < q; held += 1000) port.enqueue(packet(1000));
    REQUIRE(port.queued_bytes(0) == q);
    const std::uint64_t before = port.counters().total.ecn_marks;
    constexpr int kProbes = 20'000;
    for (int i = 0; i < kProbes; ++i) port.enqueue(packet(0));
    const double rate = static_cast<double>(port.counters().total.ecn_marks - before) / kProbes;
    const double p = 0.2 * static_cast<double>(q - 20'000) / 180'000;  // 0.05, 0.10, 0.15
    const double se = std::sqrt(p * (1 - p) / kProbes);
    MESSAGE("queue " << q << " B: marked " << rate << ", RED line " << p << ", " << (rate - p) / se << " standard errors");
    CHECK(std::fabs(rate - p) <= 3 * se);
  }
  Rng rng(1);
  CHECK_FALSE(ecn.should_mark(20'000, rng));  // at Kmin: never
  CHECK(ecn.should_mark(200'000, rng));       // at Kmax: always
}

namespace {
// Two senders into one 100G link to a receiver; ECN + DCQCN (+ PFC as a backstop).
const std::string kTwoFlows = two_flows_yaml("  ecn: {}\n  dcqcn: {}\n");

// Runs `until`, then returns each message's distinct packets received since `from`.
std::vector<double> goodput_gbps(ScenarioRun& run, Time from, Time until, std::vector<std::int64_t>* queue = nullptr) {
  Simulator& sim = const_cast<Simulator&>(run.sim());
  sim.run(from);
  std::vector<std::uint32_t> at_from;
  for (MessageId i = 0; i < run.network().messages().size(); ++i) at_from.push_back(run.network().received_packets(i));
  // Step through the window, sampling the bottleneck queue every 10 us.
  const EgressPort& bottleneck = *run.network().directions()[4].port;
  for (Time t = from + us(10); t <= until; t += us(10)) {
    sim.run(t);
    if (queue) queue->push_back(bottleneck.queued_bytes());
  }
  std::vector<double> out;
  const auto& msgs = run.network().messages().all();
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    out.push_back(static_cast<double>(run.network().received_packets(static_cast<MessageId>(i)) - at_from[i]) * 4096 * 8 / to_seconds(until - from) * 1e-9);
  }
  return out;
}
}  // namespace

TEST_CASE("DCQCN: two long flows share a 100G bottleneck fairly and keep it busy, queue mostly below Kmax") {
  ScenarioRun run(load_config_text(kTwoFlows, "two_flows"));
  std::vector<std::int64_t> queue;
  const auto g = goodput_gbps(run, ms(15), ms(20), &queue);
  const double jain = (g[0] + g[1]) * (g[0] + g[1]) / (2 * (g[0] * g[0] + g[1] * g[1]));
  // Payload over the last 5 ms against the link's payload capacity (4096 of every 4160 bytes).
  const double utilization = (g[0] + g[1]) / (100 * 4096.0 / 4160);
  const double below_kmax = static_cast<double>(std::count_if(queue.begin(), queue.end(), [](std::int64_t q) { return q < 200'000; })) /
                            static_cast<double>(queue.size());
  MESSAGE("DCQCN last 5 ms: " << g[0] << " and " << g[1] << " Gb/s, Jain " << jain << ", utilization " << utilization
                              << ", queue below Kmax in " << below_kmax * 100 << "% of samples");
  CHECK(jain >= 0.98);
  CHECK(utilization >= 0.90);
  CHECK(below_kmax >= 0.9);
}

namespace {
// Eight senders on s1 incast into r on s2; 3 ms later the victim v on s1 starts sending
// to w on s2. They share only the 400G s1-s2 link, which has room for both: the incast
// is held to r's 100G, so the victim's max-min fair share is its own line rate, 100G.
// (Started together, the incast's first burst pauses s1-s2 and ECN-marks the victim's
// queued packets too; its rate then recovers additively over tens of ms.)
std::string spreading(const std::string& congestion_control) {
  std::string yaml = R"(
topology:
  kind: custom
  hosts: [i0, i1, i2, i3, i4, i5, i6, i7, v, r, w]
  switches: [s1, s2]
  links:
)";
  for (int i = 0; i < 8; ++i) yaml += "    - {a: i" + std::to_string(i) + ", b: s1, bandwidth: 100Gbps, latency: 1us}\n";
  yaml += R"(    - {a: v, b: s1, bandwidth: 100Gbps, latency: 1us}
    - {a: s1, b: s2, bandwidth: 400Gbps, latency: 1us}
    - {a: s2, b: r, bandwidth: 100Gbps, latency: 1us}
    - {a: s2, b: w, bandwidth: 100Gbps, latency: 1us}
network:
  mtu: 4KiB
  buffer: {size: 4MiB, alpha: 0.125}
  pfc: {}
)" + congestion_control + "messages:\n";
  for (int i = 0; i < 8; ++i) yaml += "  - {src: i" + std::to_string(i) + ", dst: r, bytes: 256MiB}\n";
  yaml += "  - {src: v, dst: w, bytes: 256MiB, start: 3ms}\nstop: {time: 10ms}\n";
  return yaml;
}

// The victim's payload goodput over [5 ms, 10 ms], as a fraction of its fair share
// (100G of which 4096/4160 is payload).
double victim_share(const std::string& congestion_control, std::uint64_t* pauses) {
  ScenarioRun run(load_config_text(spreading(congestion_control), "spreading"));
  Simulator& sim = const_cast<Simulator&>(run.sim());
  sim.run(ms(5));
  const std::uint32_t at5 = run.network().received_packets(8);
  sim.run(ms(10));
  *pauses = 0;
  for (const LinkDirection& d : run.network().directions()) *pauses += d.port->counters().total.pauses_sent;
  const double gbps = static_cast<double>(run.network().received_packets(8) - at5) * 4096 * 8 / 5e-3 * 1e-9;
  return gbps / (100 * 4096.0 / 4160);
}
}  // namespace

TEST_CASE("congestion spreading: PFC alone slows a victim that shares only an upstream link, DCQCN restores it") {
  std::uint64_t pfc_pauses = 0, dcqcn_pauses = 0;
  const double pfc_only = victim_share("", &pfc_pauses);
  const double with_dcqcn = victim_share("  ecn: {}\n  dcqcn: {}\n", &dcqcn_pauses);
  MESSAGE("victim at " << pfc_only * 100 << "% of its fair share with PFC alone (" << pfc_pauses << " pauses), "
                       << with_dcqcn * 100 << "% with ECN + DCQCN (" << dcqcn_pauses << " pauses)");
  CHECK(pfc_only < 0.9);
  CHECK(with_dcqcn == within(1.0, 0.10));
}

TEST_CASE("a PFC ring with wrapping routes deadlocks and is reported, the torus dateline does not") {
  const std::string path = FABRICSIM_SOURCE_DIR "/configs/pfc_ring_deadlock.yaml";
  ScenarioRun ring(load_config_file(path));
  ring.run();
  REQUIRE(ring.deadlocked());
  CHECK_FALSE(ring.complete());
  // The cycle runs once round the ring: each switch's clockwise port waits on the next.
  const auto& cycle = ring.deadlock_detector()->cycle();
  REQUIRE(cycle.size() == 4);
  std::vector<std::uint32_t> switches;
  for (const auto& [sw, port] : cycle) switches.push_back(sw);
  std::sort(switches.begin(), switches.end());
  CHECK(switches == std::vector<std::uint32_t>{0, 1, 2, 3});

  ScenarioRun dateline(load_config_file(path, {"network.dateline=true"}));
  dateline.run();
  CHECK_FALSE(dateline.deadlocked());
  CHECK(dateline.complete());
  // Without the dateline every packet stays in class 0; with it, ring traffic uses class 1 too.
  std::uint64_t class1 = 0;
  for (const LinkDirection& d : dateline.network().directions()) {
    if (d.from.kind == NodeRef::Kind::kSwitch && d.to.kind == NodeRef::Kind::kSwitch) class1 += d.port->counters().per_class[1].packets_sent;
  }
  CHECK(class1 > 0);
}
