#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "sim/net/link.h"
#include "sim/core/simulator.h"

using namespace fabricsim;

namespace {
// Records what arrives: the time, the packet's number and the port.
struct Recorder final : PacketSink {
  Simulator* sim;
  std::vector<std::pair<Time, std::uint32_t>> got;
  explicit Recorder(Simulator& s) : sim(&s) {}
  void receive(Packet* p, PortIndex in_port) override {
    CHECK(in_port == 3);
    got.emplace_back(sim->now(), p->seq);
    sim->packets().release(p);
  }
};

// Puts packet i on the link at times[i].
struct Sender final : EventHandler {
  Simulator* sim;
  Link* link;
  std::vector<Time> times;
  std::size_t next = 0;
  void on_event() override {
    Packet* p = sim->packets().allocate();
    p->seq = static_cast<std::uint32_t>(next);
    link->transmit(p->pool_index);
    if (++next < times.size()) sim->schedule_at(*this, times[next]);
  }
};

// Every packet arrives once, in order, exactly `latency` after it was sent.
void check_wire(Time latency, const std::vector<Time>& times) {
  Simulator sim(1);
  Recorder far(sim);
  Link link(sim, latency, far, 3);
  Sender sender;
  sender.sim = &sim;
  sender.link = &link;
  sender.times = times;
  sim.schedule_at(sender, times.front());
  sim.run();
  REQUIRE(far.got.size() == times.size());
  for (std::size_t i = 0; i < times.size(); ++i) {
    CAPTURE(i);
    CHECK(far.got[i].first == times[i] + latency);
    CHECK(far.got[i].second == i);
  }
  CHECK(sim.packets().in_use() == 0);
}
}  // namespace

TEST_CASE("a link delivers each packet once, in order, one latency after it left") {
  SUBCASE("a few at a time: the inline wire") {
    check_wire(us(1), {0, ns(320), ns(640), ns(960), us(5), us(5) + ns(5)});
  }
  SUBCASE("twenty on the wire at once, then a pause, then a few again") {
    // A 1 us link with a packet every 10 ns holds about a hundred: past the eight kept
    // inline, so the wire moves to the heap, and back once it has drained.
    std::vector<Time> times;
    for (int i = 0; i < 150; ++i) times.push_back(ns(10) * i);
    for (int i = 0; i < 5; ++i) times.push_back(us(10) + ns(300) * i);
    check_wire(us(1), times);
  }
  SUBCASE("bursts over a wire that never empties: to the heap and back inline, twice") {
    // Twelve 10 ns apart (past the eight inline: the heap), then one every 300 ns (three
    // or four on the 1 us wire: back inline once four or fewer are left, though never
    // empty), then a burst again onto the three or four inline, then steady again.
    std::vector<Time> times;
    Time t = 0;
    for (int burst = 0; burst < 2; ++burst) {
      for (int i = 0; i < 12; ++i, t += ns(10)) times.push_back(t);
      for (int i = 0; i < 20; ++i, t += ns(300)) times.push_back(t);
    }
    check_wire(us(1), times);
  }
  SUBCASE("equal times: several due at once") {
    check_wire(us(1), {ns(7), ns(7), ns(7), ns(9), ns(9)});
  }
  SUBCASE("a latency just under 2^32 ps, with times whose low 32 bits wrap") {
    const Time latency = (Time{1} << 32) - 1;
    const Time base = (Time{5} << 32) - ns(1);
    check_wire(latency, {base, base + ns(2), base + ns(3) + (Time{1} << 31), base + (Time{1} << 32)});
  }
  SUBCASE("a latency of 5 ms (over 2^32 ps): whole times on the heap") {
    check_wire(ms(5), {0, us(1), ms(1), ms(4), ms(9), ms(9) + 1});
  }
}
