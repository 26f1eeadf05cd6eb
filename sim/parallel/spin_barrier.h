#pragma once
// A barrier for the windows of a split run: threads spin briefly, then yield, while the
// others arrive; the last to arrive runs the completion step and releases the rest.
// std::barrier sleeps in the kernel at once, which costs about 11 us a window on two
// cores (BM_WindowSync); windows are as short as the lookahead, so this is the floor of
// their cost. Yielding after a while (at once when threads outnumber cores) lets the
// threads being waited for run.
#include <atomic>
#include <cstdint>
#include <thread>

namespace fabricsim {

template <typename Completion>
class SpinBarrier {
 public:
  // With more threads than cores a spinning thread only keeps the one it waits for off
  // its core: then yield at once.
  SpinBarrier(int threads, Completion completion)
      : threads_(threads),
        spins_(static_cast<unsigned>(threads) <= std::thread::hardware_concurrency() ? kSpins : 0),
        completion_(std::move(completion)) {}

  void arrive_and_wait() {
    const std::uint32_t generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == threads_ - 1) {
      completion_();
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      return;
    }
    for (int spins = 0; generation_.load(std::memory_order_acquire) == generation; ++spins) {
      if (spins < spins_) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      } else {
        std::this_thread::yield();
      }
    }
  }

 private:
  static constexpr int kSpins = 4000;
  const int threads_;
  const int spins_;
  Completion completion_;
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<std::uint32_t> generation_{0};
};

}  // namespace fabricsim
