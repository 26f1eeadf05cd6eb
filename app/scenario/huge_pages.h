#pragma once
// Asks the operating system to back a large, long-lived region with huge pages (Linux
// transparent huge pages, where they are enabled for regions that ask: "madvise" or
// "always"); elsewhere it does nothing. The packet pool's chunks use it: at scale a run
// reads millions of packets in no order, and with 4 KiB pages nearly every read also
// walks the page table.
#include <cstddef>
#include <future>

namespace fabricsim {

void advise_huge_pages(void* region, std::size_t bytes);

// A heap at least this large is read in no order by a run: its state goes onto huge pages.
inline constexpr std::size_t kHugePageHeap = std::size_t{64} << 20;

// From here on, the allocator maps what it takes from the system onto huge pages as it is
// first touched (mimalloc's large OS pages), so a large run's state is on them from the
// start instead of copied onto them by back_heap_with_huge_pages (which then finds little
// left to do). The allocator then commits its segments whole, so the footprint grows by
// what they hold unused, and keeps what is freed rather than handing it back (a freed
// range would come back as small pages). Where the executable's allocator is not mimalloc
// (the Python module, the tests), nothing.
void allocate_heap_on_huge_pages();

// Backs the heap as built so far (a fabric's ports, links, queues and tables) with huge
// pages, once it holds `at_least` bytes: marks its anonymous regions for them and
// collapses what they hold now. Returns the bytes collapsed. A large fabric's state is
// read in no order, and on 4 KiB pages a miss can also walk the page table; a small
// one fits the TLB's reach, and the copy would cost more than it saves.
// Called again as a run goes, `min_resident` (a fraction) leaves alone each huge page's
// range with less than that in use: collapsing fills the range, and a growing heap's
// freed corners would add to the footprint what nothing reads.
std::size_t back_heap_with_huge_pages(std::size_t at_least, double min_resident = 0.0);

// A run's passes of back_heap_with_huge_pages: where the run leaves threads idle (flow
// fidelity with --threads: the run is one solver on one thread), each pass runs on a
// thread of its own, so the copying is off the run's path; a pass asked for while one
// is in flight is skipped. Otherwise each pass runs where it is asked for. What memory
// holds is the same either way, so the run is too.
class HugePageKeeper {
 public:
  HugePageKeeper(std::size_t at_least, double min_resident, bool aside)
      : at_least_(at_least), min_resident_(min_resident), aside_(aside) {}
  HugePageKeeper(const HugePageKeeper&) = delete;
  HugePageKeeper& operator=(const HugePageKeeper&) = delete;
  ~HugePageKeeper();  // waits for a pass in flight

  void keep();

 private:
  std::size_t at_least_;
  double min_resident_;
  bool aside_;
  std::future<std::size_t> pass_;
};

}  // namespace fabricsim
