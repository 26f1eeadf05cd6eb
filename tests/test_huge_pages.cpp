// Backing the heap with huge pages moves memory, never its contents.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "app/scenario/huge_pages.h"

namespace fabricsim {

namespace {
constexpr std::size_t kHuge = std::size_t{2} << 20;

std::uint64_t pattern(std::size_t i) { return i * 0x9e3779b97f4a7c15ull + 7; }
}  // namespace

TEST_CASE("back_heap_with_huge_pages: below its threshold it does nothing") {
  CHECK(back_heap_with_huge_pages(SIZE_MAX) == 0);
}

TEST_CASE("back_heap_with_huge_pages: collapses whole huge pages and keeps every byte") {
  // 16 MiB written through: malloc maps it, and it spans at least seven whole 2 MiB pages.
  constexpr std::size_t kWords = (std::size_t{16} << 20) / sizeof(std::uint64_t);
  const auto words = std::make_unique<std::uint64_t[]>(kWords);
  for (std::size_t i = 0; i < kWords; ++i) words[i] = pattern(i);
  const std::size_t backed = back_heap_with_huge_pages(0);
  CHECK(backed % kHuge == 0);  // only whole, aligned huge pages are asked for
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < kWords; ++i) wrong += words[i] != pattern(i) ? 1 : 0;
  CHECK(wrong == 0);
  // Written again after: still ordinary memory.
  for (std::size_t i = 0; i < kWords; i += 4096) words[i] = 1;
  CHECK(words[4096] == 1);
}

TEST_CASE("a keeper's passes, on a thread of their own or in line, keep every byte while the memory is written") {
  // 16 MiB of a pattern; passes asked for while the caller keeps writing its second half
  // (a pass aside runs beside the writes, as beside a flow-level run's loop); each pass
  // asked for while one is in flight is skipped, and the keeper's end waits for the last.
  constexpr std::size_t kWords = (std::size_t{16} << 20) / sizeof(std::uint64_t);
  const auto words = std::make_unique<std::uint64_t[]>(kWords);
  for (std::size_t i = 0; i < kWords; ++i) words[i] = pattern(i);
  for (const bool aside : {true, false}) {
    CAPTURE(aside);
    {
      HugePageKeeper keeper(0, 0.0, aside);
      for (int round = 0; round < 4; ++round) {
        keeper.keep();
        for (std::size_t i = kWords / 2; i < kWords; ++i) words[i] = pattern(i) + static_cast<std::uint64_t>(round);
      }
    }
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kWords; ++i) wrong += words[i] != pattern(i) + (i < kWords / 2 ? 0 : 3) ? 1 : 0;
    CHECK(wrong == 0);
  }
}

#if defined(__linux__)
TEST_CASE("back_heap_with_huge_pages: a range less used than asked is left as it is") {
  // Four huge pages' worth, aligned, fresh (zero) and on small pages: a quarter of the
  // second written. (Mapped here, not from malloc, which may hand back used memory.)
  void* mapped = mmap(nullptr, 5 * kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mapped != MAP_FAILED);
  auto* bytes = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(mapped) + kHuge - 1) & ~(kHuge - 1));
  (void)madvise(bytes, 4 * kHuge, MADV_NOHUGEPAGE);  // (where THP is "always")
  const long page = sysconf(_SC_PAGESIZE);
  REQUIRE(page > 0);
  const std::size_t pages = kHuge / static_cast<std::size_t>(page);
  for (std::size_t i = 0; i < pages / 4; ++i) bytes[kHuge + i * static_cast<std::size_t>(page)] = 42;
  const auto resident = [&] {
    std::vector<unsigned char> in(pages);
    REQUIRE(mincore(bytes + kHuge, kHuge, in.data()) == 0);
    std::size_t n = 0;
    for (const unsigned char r : in) n += r & 1u;
    return n;
  };
  REQUIRE(resident() == pages / 4);
  back_heap_with_huge_pages(0, 0.5);
  CHECK(resident() == pages / 4);  // a quarter in use: not filled to a huge page
  CHECK(bytes[kHuge + static_cast<std::size_t>(page)] == 42);
  // Asked for less, it may be collapsed (where the kernel has huge pages): whole, and the
  // same bytes.
  back_heap_with_huge_pages(0, 0.1);
  const std::size_t after = resident();
  CHECK((after == pages / 4 || after == pages));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < pages; ++i) {
    wrong += bytes[kHuge + i * static_cast<std::size_t>(page)] != (i < pages / 4 ? 42 : 0) ? 1 : 0;
  }
  CHECK(wrong == 0);
  munmap(mapped, 5 * kHuge);
}
#endif

}  // namespace fabricsim
