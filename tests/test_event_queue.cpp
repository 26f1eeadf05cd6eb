#include <doctest/doctest.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "sim/core/event_queue.h"
#include "sim/core/rng.h"

using namespace fabricsim;

namespace {
struct Recorder final : EventHandler {
  int id = 0;
  void on_event() override {}
};

std::vector<Recorder> recorders(int n) {
  std::vector<Recorder> h(n);
  for (int i = 0; i < n; ++i) h[i].id = i;
  return h;
}

int id_of(EventHandler* e) { return static_cast<Recorder*>(e)->id; }
}  // namespace

TEST_CASE("events pop in time order, equal times in scheduling order") {
  EventQueue q;
  auto h = recorders(6);
  q.schedule(h[0], 50);
  q.schedule(h[1], 10);
  q.schedule(h[2], 50);
  q.schedule(h[3], 10);
  q.schedule(h[4], 30);
  q.schedule(h[5], 50);
  std::vector<int> order;
  while (!q.empty()) order.push_back(id_of(q.pop()));
  CHECK(order == std::vector<int>{1, 3, 4, 0, 2, 5});
}

TEST_CASE("cancel removes a pending event, reschedule moves it behind equal times") {
  EventQueue q;
  auto h = recorders(4);
  q.schedule(h[0], 100);
  q.schedule(h[1], 200);
  q.schedule(h[2], 300);
  q.cancel(h[1]);
  CHECK_FALSE(h[1].scheduled());
  CHECK(q.size() == 2);
  q.cancel(h[1]);  // cancelling twice is harmless
  q.schedule(h[3], 100);
  q.schedule(h[0], 100);  // same time again: now after h[3]
  q.schedule(h[2], 50);   // moved earlier
  std::vector<int> order;
  std::vector<Time> times;
  while (!q.empty()) {
    EventHandler* e = q.pop();
    order.push_back(id_of(e));
    times.push_back(e->event_time());
  }
  CHECK(order == std::vector<int>{2, 3, 0});
  CHECK(times == std::vector<Time>{50, 100, 100});
}

namespace {
// Random schedule, cancel and pop on `handlers` handlers, each pop checked against the
// (time, sequence) order the queue's contract defines. `next_time(now)` draws the time of
// each schedule. Returns how many pops shared their time with the pop before.
template <typename NextTime>
std::size_t check_against_reference(std::uint64_t seed, int handlers, NextTime next_time, int steps = 200'000) {
  EventQueue q;
  Rng rng(seed);
  auto h = recorders(handlers);
  std::vector<std::tuple<Time, long, int>> pending;  // time, seq, id
  std::vector<long> seq_of(static_cast<std::size_t>(handlers), -1);
  long seq = 0;
  Time now = 0;
  Time last = -1;
  std::size_t shared = 0;
  for (int step = 0; step < steps; ++step) {
    const auto op = rng.below(10);
    const int i = static_cast<int>(rng.below(static_cast<std::uint64_t>(handlers)));
    if (op < 5) {
      const Time t = next_time(now, rng);
      if (seq_of[i] >= 0) std::erase(pending, std::tuple<Time, long, int>{h[i].event_time(), seq_of[i], i});
      q.schedule(h[i], t);
      seq_of[i] = seq++;
      pending.emplace_back(t, seq_of[i], i);
    } else if (op < 6) {
      if (seq_of[i] >= 0) std::erase(pending, std::tuple<Time, long, int>{h[i].event_time(), seq_of[i], i});
      q.cancel(h[i]);
      seq_of[i] = -1;
    } else if (!pending.empty()) {
      const auto best = *std::min_element(pending.begin(), pending.end());
      std::erase(pending, best);
      EventHandler* e = q.pop();
      REQUIRE(id_of(e) == std::get<2>(best));
      REQUIRE(e->event_time() == std::get<0>(best));
      now = std::get<0>(best);
      if (now == last) ++shared;
      last = now;
      seq_of[std::get<2>(best)] = -1;
    }
    REQUIRE(q.size() == pending.size());
  }
  while (!q.empty()) q.pop();
  CHECK(q.lower_bound_time() == kTimeMax);
  return shared;
}
}  // namespace

TEST_CASE("random schedule/cancel/pop agrees with a sorted reference") {
  // Times collide often (coarse grid) to exercise the tie order.
  check_against_reference(7, 2000, [](Time now, Rng& rng) { return now + static_cast<Time>(rng.below(64)) * 1000; });
}

// Most entries come a fixed delay after the time running (a port's serialization time,
// a link's latency): those go to one FIFO per delay, found by hash, the rest (and a delay
// whose FIFO holds another) to the radix heap. 24 delays for 16 FIFOs, so both paths and
// their ties at one time mix; the order must be the reference's all the same.
TEST_CASE("fixed delays through the per-delay FIFOs and others through the heap agree with a sorted reference") {
  std::vector<Time> delays;
  for (int d = 1; d <= 24; ++d) delays.push_back(static_cast<Time>(d) * 40'000 + (d % 3) * 1'000'000);
  const std::size_t shared = check_against_reference(11, 3000, [&](Time now, Rng& rng) {
    return now + (rng.below(10) < 9 ? delays[rng.below(delays.size())] : static_cast<Time>(1 + rng.below(3'000'000)));
  });
  CHECK(shared > 1000);  // ties were exercised
}

// FIFOs taken, emptied and taken again for other delays, in every order: the queue's
// earliest FIFO head must follow each of them (a stale choice hides a due FIFO).
// Many fresh queues, each with a few delays of a larger pool, so the FIFOs are first taken
// in many orders.
TEST_CASE("FIFOs taken in any order, emptied and refilled agree with a sorted reference") {
  Rng pick(5);
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    std::vector<Time> delays;
    const auto n = 2 + pick.below(5);
    for (std::uint64_t d = 0; d < n; ++d) delays.push_back(static_cast<Time>(1 + pick.below(64)) * 7'919);
    check_against_reference(seed, 12, [&](Time now, Rng& rng) { return now + delays[rng.below(delays.size())]; }, 2'000);
  }
}

TEST_CASE("an event at the end of time runs last, after events a FIFO holds") {
  // kTimeMax is also what an empty FIFO's head reads: an event there must not be taken
  // for one, nor one taken for it.
  EventQueue q;
  auto h = recorders(4);
  q.schedule(h[0], 1'000);
  q.schedule(h[1], kTimeMax);
  CHECK(id_of(q.pop()) == 0);
  q.schedule(h[2], 2'000);  // 1,000 after the time running: a FIFO's
  q.schedule(h[3], 3'000);
  CHECK(q.lower_bound_time() == 2'000);
  CHECK(id_of(q.pop()) == 2);
  CHECK(id_of(q.pop()) == 3);
  EventHandler* last = q.pop();
  CHECK(id_of(last) == 1);
  CHECK(last->event_time() == kTimeMax);
  CHECK(q.empty());
  CHECK(q.lower_bound_time() == kTimeMax);
}

TEST_CASE("peeking the next time, then scheduling earlier, keeps the order") {
  // What a run stopped at a time limit does: look at the next event, stop, and then
  // take an event earlier than the one it looked at.
  EventQueue q;
  auto h = recorders(3);
  q.schedule(h[0], 1'000'000);
  q.schedule(h[1], 2'000'000);
  CHECK(q.next_time() == 1'000'000);
  q.schedule(h[2], 500);
  CHECK(q.next_time() == 500);
  CHECK(id_of(q.pop()) == 2);
  CHECK(id_of(q.pop()) == 0);
  CHECK(id_of(q.pop()) == 1);
  CHECK(q.empty());
}

TEST_CASE("equal times run by order key, then in rounds: a split queue runs its part in the same order") {
  // Handlers 0..5 with order keys 50, 10, 40, 20, 30, 60, all due at 100: they run by key,
  // whatever order they were scheduled in.
  EventQueue q;
  auto h = recorders(8);
  const std::uint32_t keys[] = {50, 10, 40, 20, 30, 60};
  for (int i = 0; i < 6; ++i) h[i].set_order(keys[i]);
  h[6].set_order(5);
  h[7].set_order(15);
  for (int i = 0; i < 6; ++i) q.schedule(h[i], 100);
  std::vector<int> order;
  order.push_back(id_of(q.pop()));  // key 10
  // Scheduled at the running time: the next round, even with a smaller key (5) than
  // those still due in this one; a key-15 handler joins that round too.
  q.schedule(h[6], 100);
  q.schedule(h[7], 100);
  while (!q.empty()) order.push_back(id_of(q.pop()));
  CHECK(order == std::vector<int>{1, 3, 4, 2, 0, 5, 6, 7});

  // A queue holding only the odd-keyed half runs that half in the same relative order.
  EventQueue part;
  auto g = recorders(6);
  for (int i = 0; i < 6; ++i) g[i].set_order(keys[i]);
  for (int i : {4, 0, 2}) part.schedule(g[i], 100);  // keys 30, 50, 40
  std::vector<int> sub;
  while (!part.empty()) sub.push_back(id_of(part.pop()));
  CHECK(sub == std::vector<int>{4, 2, 0});
}

TEST_CASE("looking ahead to a limit moves nothing: earlier events may still be scheduled") {
  // A partition's window ends before its next event; its inbox then brings an event
  // between the window's end and that event.
  EventQueue q;
  auto h = recorders(3);
  q.schedule(h[0], 10);
  q.schedule(h[1], 5'000'000);
  CHECK(q.due_by(10));
  CHECK(id_of(q.pop()) == 0);
  CHECK_FALSE(q.due_by(999'999));
  q.schedule(h[2], 1'000'000);
  CHECK(q.due_by(1'000'000));
  CHECK(id_of(q.pop()) == 2);
  CHECK(id_of(q.pop()) == 1);
}

TEST_CASE("large rounds run by order key, keyless handlers last, whatever the span of the keys") {
  // A round of thousands (a fabric's links in lock-step) is sorted another way than a
  // small one; the order must be the same: by key, then the keyless in scheduling order.
  // Some handlers are rescheduled within the round's time, leaving a forgotten entry
  // with their key behind. Spans of one, two and three radix digits, and wider; rounds
  // of 40 and 100 (narrow digits, three passes for the wider spans) and of hundreds or
  // thousands.
  for (const std::uint32_t span : {250u, 50'000u, 5'000'000u, 3'000'000'000u}) {
    for (const int size : {40, 100, 0}) {
      for (const int keyless : {0, 150}) {
        CAPTURE(span);
        CAPTURE(size);
        CAPTURE(keyless);
        EventQueue q;
        Rng rng(span + static_cast<std::uint32_t>(keyless + size));
        const int keyed = size != 0 ? size : span < 3000 ? 200 : 3000;
        auto h = recorders(keyed + keyless);
        std::vector<std::uint32_t> keys;
        while (keys.size() < static_cast<std::size_t>(keyed)) {
          const auto k = static_cast<std::uint32_t>(100 + rng.below(span));
          if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
        }
        for (int i = 0; i < keyed; ++i) h[i].set_order(keys[static_cast<std::size_t>(i)]);
        std::vector<int> order(static_cast<std::size_t>(keyed + keyless));
        for (int i = 0; i < keyed + keyless; ++i) order[static_cast<std::size_t>(i)] = i;
        for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
        std::vector<int> keyless_scheduled;
        for (int i : order) {
          q.schedule(h[i], 5000);
          if (i >= keyed) keyless_scheduled.push_back(i);
        }
        // Every tenth keyed handler moves (first away, then back to the same time).
        for (int i = 0; i < keyed; i += 10) {
          q.schedule(h[i], 9000);
          q.schedule(h[i], 5000);
        }
        std::vector<int> expected(static_cast<std::size_t>(keyed));
        for (int i = 0; i < keyed; ++i) expected[static_cast<std::size_t>(i)] = i;
        std::sort(expected.begin(), expected.end(),
                  [&](int a, int b) { return keys[static_cast<std::size_t>(a)] < keys[static_cast<std::size_t>(b)]; });
        expected.insert(expected.end(), keyless_scheduled.begin(), keyless_scheduled.end());
        std::vector<int> got;
        while (!q.empty()) {
          EventHandler* e = q.pop();
          REQUIRE(e->event_time() == 5000);
          got.push_back(id_of(e));
        }
        CHECK(got == expected);
      }
    }
  }
}
