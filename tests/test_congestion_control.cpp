// Congestion-control schemes (sim/endpoint/cc/) against the figures their papers report.
#include <doctest/doctest.h>

#include <numeric>

#include "app/config/config_loader.h"
#include "app/scenario/scenario.h"
#include "sim/endpoint/cc/dcqcn.h"
#include "test_support.h"

using namespace fabricsim;

namespace {

struct Share {
  double a_gbps, b_gbps, mean_queue_bytes;
};

// Payload goodput of each flow over [from, until], and the bottleneck's mean queue
// sampled every microsecond.
Share share(const std::string& yaml, Time from, Time until) {
  ScenarioRun run(load_config_text(yaml, "two_flows"));
  Simulator& sim = const_cast<Simulator&>(run.sim());
  sim.run(from);
  const Network& net = run.network();
  const std::uint32_t a0 = net.received_packets(0), b0 = net.received_packets(1);
  const EgressPort& bottleneck = *run.network().directions()[4].port;  // s -> r
  double queue_sum = 0;
  int samples = 0;
  for (Time t = from + us(1); t <= until; t += us(1)) {
    sim.run(t);
    queue_sum += static_cast<double>(bottleneck.queued_bytes());
    ++samples;
  }
  const double seconds = to_seconds(until - from);
  return {(net.received_packets(0) - a0) * 4096.0 * 8 / seconds * 1e-9, (net.received_packets(1) - b0) * 4096.0 * 8 / seconds * 1e-9,
          queue_sum / samples};
}

}  // namespace

TEST_CASE("HPCC: two long flows on one 100G bottleneck converge to 50/50 and keep the queue near zero") {
  const Share s = share(two_flows_yaml("  hpcc: {}\n"), ms(2), ms(4));
  MESSAGE("HPCC: " << s.a_gbps << " and " << s.b_gbps << " Gb/s, mean queue " << s.mean_queue_bytes << " B");
  CHECK(s.a_gbps / (s.a_gbps + s.b_gbps) == within(0.5, 0.05));
  // HPCC aims at eta = 95% of the wire. Two paced flows that meet at the bottleneck in
  // step leave one packet waiting as often as not, and HPCC counts a one-packet queue
  // as 4160 x 8 / (100G x T = 4.7 us) = 7% of utilization: they settle near 90%.
  const double wire_utilization = (s.a_gbps + s.b_gbps) * 4160 / 4096 / 100;
  CHECK(wire_utilization >= 0.88);
  CHECK(wire_utilization <= 0.95);
  CHECK(s.mean_queue_bytes < 10'000);
}

TEST_CASE("HPCC: incast 16 to 1 completes with no PFC pause where rate-less RoCE pauses") {
  const auto incast = [](const std::string& congestion_control) {
    return incast_yaml("  buffer: {size: 4MiB, alpha: 0.125}\n  pfc: {}\n" + congestion_control);
  };
  const auto pauses_of = [](const ScenarioRun& run) {
    std::uint64_t n = 0;
    for (const LinkDirection& d : run.network().directions()) n += d.port->counters().total.pauses_sent;
    return n;
  };
  ScenarioRun plain(load_config_text(incast(""), "plain"));
  plain.run();
  ScenarioRun hpcc(load_config_text(incast("  hpcc: {}\n"), "hpcc"));
  hpcc.run();
  REQUIRE(hpcc.complete());
  MESSAGE("incast pauses: rate-less " << pauses_of(plain) << ", HPCC " << pauses_of(hpcc));
  CHECK(pauses_of(plain) > 0);
  CHECK(pauses_of(hpcc) == 0);
}

TEST_CASE("DCQCN by hand: target clamping on consecutive cuts, and timer-only hyper increase") {
  // alpha starts at 1, so each cut halves the rate; fast recovery averages rate and target.
  const auto after = [](bool clamp, std::int64_t byte_counter, int timer_events) {
    DcqcnConfig c;
    c.clamp_target_rate = clamp;
    c.byte_counter = byte_counter;
    c.g = 0;  // alpha stays 1: every cut halves
    const Dcqcn d(c);
    CcFlow f;
    d.start(f, 100e9, 0, 0);
    d.on_cnp(f, 0);
    d.on_cnp(f, 0);  // no increase between the cuts
    while (f.as<Dcqcn::Flow>().timer_events < timer_events) {
      const Time now = d.next_timer(f);  // the rate timer's, or the alpha timer's (no effect: g = 0)
      d.on_timer(f, 100e9, now);
    }
    return f.rate_bps / 1e9;
  };
  // Clamping on: target 100 -> 50 at the second cut, rate 25; one increase: (25 + 50) / 2.
  CHECK(after(true, 10'000'000, 0) == within(25.0, 1e-12));
  CHECK(after(true, 10'000'000, 1) == within(37.5, 1e-12));
  // Off: the second cut keeps the target at 100: (25 + 100) / 2.
  CHECK(after(false, 10'000'000, 1) == within(62.5, 1e-12));
  // Timer alone with the byte counter off: events 1-4 fast recovery toward 50 (37.5,
  // 43.75, 46.875, 48.4375); event 5 additive (target 50.04, rate 49.23875); event 6
  // hyper, both stage counters read the timer's 6 > F = 5: target 50.44, rate 49.839375.
  // With the byte counter on and no bytes sent the sixth is additive: 50.08, 49.659375.
  CHECK(after(true, 0, 6) == within(49.839375, 1e-9));
  CHECK(after(true, 10'000'000, 6) == within(49.659375, 1e-9));
}

TEST_CASE("ECN thresholds by port speed: each port marks by its own speed's Kmin and Kmax") {
  ScenarioRun run(load_config_text(R"(
topology:
  kind: custom
  hosts: [a, b]
  switches: [s]
  links:
    - {a: a, b: s, bandwidth: 100Gbps, latency: 1us}
    - {a: s, b: b, bandwidth: 400Gbps, latency: 1us}
network:
  ecn:
    kmin: 5KB
    kmax: 200KB
    by_speed:
      - {bandwidth: 100Gbps, kmin: 400KB, kmax: 1600KB, pmax: 0.2}
messages:
  - {src: a, dst: b, bytes: 4KiB}
)",
                                   "ecn-speeds"));
  const Switch& s = run.network().switch_at(0);
  for (PortIndex i = 0; i < s.port_count(); ++i) {
    const EcnConfig* e = s.port(i).ecn();
    REQUIRE(e != nullptr);
    if (s.port(i).bandwidth() == Bandwidth::gbps(100)) {
      CHECK(e->kmin_bytes == 400'000);
      CHECK(e->kmax_bytes == 1'600'000);
      CHECK(e->pmax == 0.2);
    } else {
      CHECK(e->kmin_bytes == 5'000);
      CHECK(e->kmax_bytes == 200'000);
    }
  }
}
