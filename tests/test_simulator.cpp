#include <doctest/doctest.h>

#include <cstdint>
#include <utility>
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

namespace {
std::vector<std::pair<std::uintptr_t, std::size_t>> advised;  // the regions the pool advised
void note_advice(void* region, std::size_t bytes) { advised.emplace_back(reinterpret_cast<std::uintptr_t>(region), bytes); }
}  // namespace

// Eight blocks of 4,096 packets one at a time, then chunks of eight blocks (2 MiB of
// 64-byte packets), each 2 MiB-aligned and advised once; every packet's index names it.
TEST_CASE("packet pool grows in 2 MiB chunks once it holds eight blocks, and indices still name packets") {
  advised.clear();
  Simulator sim(1);
  PacketPool& pool = sim.packets();
  pool.set_chunk_advice(note_advice);
  std::vector<Packet*> got;
  for (int i = 0; i < 8 * 4096; ++i) got.push_back(pool.allocate());
  CHECK(pool.capacity() == 8 * 4096);
  CHECK(advised.empty());
  got.push_back(pool.allocate());  // the 32,769th: the first chunk
  CHECK(pool.capacity() == 16 * 4096);
  REQUIRE(advised.size() == 1);
  CHECK(advised[0].second == std::size_t{2} << 20);
  CHECK(advised[0].first % (std::size_t{2} << 20) == 0);
  while (got.size() < 16 * 4096 + 1) got.push_back(pool.allocate());  // into the second chunk
  CHECK(pool.capacity() == 24 * 4096);
  CHECK(advised.size() == 2);
  std::vector<bool> seen(pool.capacity());
  for (Packet* p : got) {
    REQUIRE(p->pool_index < pool.capacity());
    CHECK(pool.at(p->pool_index) == p);
    CHECK(!seen[p->pool_index]);
    seen[p->pool_index] = true;
  }
  // Chunk packets are handed out in address order, as blocks' are.
  const Packet* first_of_chunk = pool.at(8 * 4096);
  CHECK(reinterpret_cast<std::uintptr_t>(first_of_chunk) == advised[0].first);
  CHECK(pool.at(16 * 4096 - 1) == first_of_chunk + 8 * 4096 - 1);
}
