#pragma once
// Items 0 .. count-1 made on several threads and taken on the calling thread in order.
// Making an item is independent of every other (a route group's Dijkstra); taking it is
// not (the tables it goes into keep group order). Item i is made into slot i % slots,
// once item i - slots was taken, so memory is the slots', whatever the count. The
// calling thread makes items too whenever the next one to take is not ready, so with one
// thread this is make(0), take(0), make(1), take(1), ... and with any number the takes
// see the same slots' contents in the same order.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace fabricsim {

// make(i, slot) runs on any of `threads` threads, concurrently with other makes (on other
// slots) and with take(j, slot) for j < i; take(i, slot) runs on the caller, in order.
// An exception from either stops the rest and is rethrown here.
template <typename Slot, typename Make, typename Take>
void run_in_order(std::uint32_t count, int threads, std::vector<Slot>& slots, Make make, Take take) {
  if (threads <= 1 || count <= 1 || slots.size() <= 1) {
    for (std::uint32_t i = 0; i < count; ++i) {
      Slot& s = slots[i % slots.size()];
      make(i, s);
      take(i, s);
    }
    return;
  }
  const auto n_slots = static_cast<std::uint32_t>(slots.size());
  constexpr std::uint32_t kEmpty = UINT32_MAX;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::uint32_t> made(n_slots, kEmpty);  // by slot: the item made into it
  std::uint32_t next = 0;                           // the next item to make
  std::uint32_t taken = 0;                          // items taken
  bool stop = false;
  std::exception_ptr failure;
  // Runs `step` with `lock` released; false where it threw: the first failure is kept
  // and the rest stop.
  const auto unlocked = [&](std::unique_lock<std::mutex>& lock, const auto& step) {
    lock.unlock();
    try {
      step();
    } catch (...) {
      lock.lock();
      if (!failure) failure = std::current_exception();
      stop = true;
      changed.notify_all();
      return false;
    }
    lock.lock();
    return true;
  };
  // Makes the next item if its slot is free; false (nothing done) where it is not.
  // Called with `lock` held; releases it while making.
  const auto make_next = [&](std::unique_lock<std::mutex>& lock) {
    if (stop || next >= count || next >= taken + n_slots) return false;
    const std::uint32_t i = next++;
    if (unlocked(lock, [&] { make(i, slots[i % n_slots]); })) {
      made[i % n_slots] = i;
      changed.notify_all();
    }
    return true;
  };
  std::vector<std::thread> helpers;
  helpers.reserve(static_cast<std::size_t>(threads - 1));
  for (int t = 1; t < threads; ++t) {
    helpers.emplace_back([&] {
      std::unique_lock lock(mutex);
      while (!stop && next < count) {
        if (!make_next(lock)) changed.wait(lock);
      }
    });
  }
  {
    std::unique_lock lock(mutex);
    for (std::uint32_t i = 0; i < count && !stop; ++i) {
      while (!stop && made[i % n_slots] != i) {
        if (!make_next(lock)) changed.wait(lock);
      }
      if (stop || !unlocked(lock, [&] { take(i, slots[i % n_slots]); })) break;
      made[i % n_slots] = kEmpty;
      taken = i + 1;
      changed.notify_all();
    }
    stop = true;
    changed.notify_all();
  }
  for (std::thread& t : helpers) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace fabricsim
