// Backing the heap with huge pages moves memory, never its contents.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "app/huge_pages.h"

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

}  // namespace fabricsim
