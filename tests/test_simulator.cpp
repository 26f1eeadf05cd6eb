#include <doctest/doctest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/packet.h"
#include "sim/core/simulator.h"

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

TEST_CASE("egress queue slots: FIFO over 256-byte blocks, drained blocks reused, 2 MiB regions advised past 2 MiB") {
  struct Slot {
    std::uint32_t a, b, c;  // 12 bytes, as a queued packet's slot: 20 to a block
  };
  advised.clear();
  SlotBlockPool pool;
  pool.set_chunk_advice(note_advice);
  BlockFifo<Slot> q;
  CHECK(q.empty());
  CHECK(pool.bytes() == 0);  // an empty queue holds no block
  // In and out interleaved, across many block boundaries: out in the order in.
  std::uint32_t in = 0, out = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 37; ++i, ++in) q.push_back(pool, {in, in * 3, in * 7});
    for (int i = 0; i < 29; ++i, ++out) {
      REQUIRE(q.front().a == out);
      CHECK(q.front().b == out * 3);
      CHECK(q.front().c == out * 7);
      q.pop_front(pool);
    }
  }
  CHECK(q.size() == 50 * (37 - 29));
  while (!q.empty()) {
    REQUIRE(q.front().a == out++);
    q.pop_front(pool);
  }
  CHECK(out == in);
  // 429 slots at most were held at once (22 blocks of 256): the first 64 KiB region sufficed.
  CHECK(pool.bytes() == std::size_t{64} << 10);
  // Two queues of 2,000 each (100 blocks each, 200 of the region's 256); drained, their
  // blocks serve a third queue of 4,000 without the pool growing.
  BlockFifo<Slot> q1, q2, q3;
  for (std::uint32_t i = 0; i < 2000; ++i) {
    q1.push_back(pool, {i, 0, 0});
    q2.push_back(pool, {i, 1, 0});
  }
  for (std::uint32_t i = 0; i < 2000; ++i) {
    REQUIRE(q1.front().a == i);
    q1.pop_front(pool);
    REQUIRE(q2.front().a == i);
    REQUIRE(q2.front().b == 1);
    q2.pop_front(pool);
  }
  for (std::uint32_t i = 0; i < 4000; ++i) q3.push_back(pool, {i, 2, 0});
  CHECK(pool.bytes() == std::size_t{64} << 10);
  CHECK(advised.empty());
  // Past 2 MiB (32 regions of 64 KiB: 8,192 blocks, 163,840 slots) the pool grows 2 MiB
  // at a time, aligned and advised.
  for (std::uint32_t i = 4000; i < 163840 + 1; ++i) q3.push_back(pool, {i, 2, 0});
  CHECK(pool.bytes() == (std::size_t{2} << 20) * 2);
  REQUIRE(advised.size() == 1);
  CHECK(advised[0].second == std::size_t{2} << 20);
  CHECK(advised[0].first % (std::size_t{2} << 20) == 0);
  for (std::uint32_t i = 0; i < 163841; ++i) {
    REQUIRE(q3.front().a == i);
    q3.pop_front(pool);
  }
  CHECK(q3.empty());
}
