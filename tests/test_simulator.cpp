#include <doctest/doctest.h>

#include <vector>

#include "sim/packet.h"
#include "sim/simulator.h"

using namespace fabricsim;

namespace {
// Fires every `period` and counts: a minimal periodic component.
struct Ticker final : EventHandler {
  Simulator* sim;
  Time period;
  int fired = 0;
  Ticker(Simulator& s, Time p) : sim(&s), period(p) {}
  void on_event() override {
    ++fired;
    sim->schedule_in(*this, period);
  }
};
}  // namespace

TEST_CASE("run stops at a simulated-time limit with the clock on the limit") {
  Simulator sim(1);
  Ticker t(sim, ns(10));
  sim.schedule_at(t, 0);
  CHECK(sim.run(ns(95)) == StopReason::kTimeLimit);
  CHECK(t.fired == 10);  // 0, 10, ..., 90
  CHECK(sim.now() == ns(95));
  // Continuing picks up where it stopped.
  CHECK(sim.run(ns(200)) == StopReason::kTimeLimit);
  CHECK(t.fired == 21);
}

TEST_CASE("run stops at an event-count limit") {
  Simulator sim(1);
  Ticker t(sim, ns(10));
  sim.schedule_at(t, 0);
  CHECK(sim.run(kTimeMax, 7) == StopReason::kEventLimit);
  CHECK(t.fired == 7);
  CHECK(sim.events_processed() == 7);
  CHECK(sim.now() == ns(60));
}

TEST_CASE("two simulators in one process do not share state") {
  Simulator a(1), b(1);
  Ticker ta(a, ns(1)), tb(b, ns(3));
  a.schedule_at(ta, 0);
  b.schedule_at(tb, 0);
  a.run(ns(10));
  CHECK(ta.fired == 11);
  CHECK(tb.fired == 0);
  CHECK(b.now() == 0);
  // Same seed, same numbers; drawing from one does not move the other.
  const auto x = a.rng().next();
  CHECK(b.rng().next() == x);
}

TEST_CASE("scheduling in the past is refused") {
  Simulator sim(1);
  Ticker t(sim, ns(10));
  sim.schedule_at(t, ns(5));
  sim.run(ns(7));
  Ticker late(sim, 1);
  CHECK_THROWS(sim.schedule_at(late, ns(6)));
}

TEST_CASE("packet pool reuses packets and every packet fits a cache line") {
  static_assert(sizeof(Packet) <= 64);
  Simulator sim(1);
  PacketPool& pool = sim.packets();
  std::vector<Packet*> got;
  for (int i = 0; i < 5000; ++i) got.push_back(pool.allocate());
  CHECK(pool.in_use() == 5000);
  const std::size_t cap = pool.capacity();
  for (Packet* p : got) pool.release(p);
  CHECK(pool.in_use() == 0);
  for (int i = 0; i < 5000; ++i) pool.allocate();
  CHECK(pool.capacity() == cap);  // no growth on reuse
}
