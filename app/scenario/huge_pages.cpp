#include "app/scenario/huge_pages.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#if defined(__linux__) && __has_include(<mimalloc.h>)
#include <mimalloc.h>
// Weak: only the fabricsim executable links mimalloc; elsewhere the address is null.
#pragma weak mi_option_set_enabled
#define FABRICSIM_MIMALLOC_OPTIONS 1
#endif

namespace fabricsim {

void advise_huge_pages(void* region, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only: refused (no THP in this kernel, or a region it will not back), the
  // region keeps small pages and the run is the same but for its speed.
  (void)madvise(region, bytes, MADV_HUGEPAGE);
#else
  (void)region;
  (void)bytes;
#endif
}

void allocate_heap_on_huge_pages() {
#if defined(FABRICSIM_MIMALLOC_OPTIONS)
  // Advice to mimalloc: its segments from here on are marked for huge pages (or refused
  // them, and keep small ones); committed whole as they are mapped.
  if (&mi_option_set_enabled == nullptr) return;
  mi_option_set_enabled(mi_option_large_os_pages, true);
#if MI_MALLOC_VERSION < 210
  // Nor does it hand freed pages back: the next allocation would fault them in again,
  // zeroed, as small pages that split the huge ones around them. (mimalloc 2.1 renamed
  // this; there its default stays.)
  mi_option_set_enabled(mi_option_allow_decommit, false);
#endif
#endif
}

std::size_t back_heap_with_huge_pages(std::size_t at_least, double min_resident) {
  std::size_t backed = 0;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  constexpr int kCollapse = 25;  // MADV_COLLAPSE (Linux 6.1), which older headers lack
  // smaps, not maps: each mapping's resident size comes with it.
  std::FILE* maps = std::fopen("/proc/self/smaps", "r");
  if (maps == nullptr) return 0;
  // Private, writable, anonymous mappings: the malloc heap and its mmapped blocks, each
  // trimmed to whole huge pages. With `min_resident`, a mapping with under 1/64 of its
  // pages resident is passed over: scanning it a huge page at a time would cost more than
  // its few dense ranges could save (a sanitizer's shadow reserves terabytes, an
  // allocator's arenas run ahead of use).
  struct Region {
    std::uintptr_t from = 0, to = 0;
    std::size_t bytes = 0;  // the whole mapping
  };
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> regions;
  std::optional<Region> pending;
  const auto keep = [&](const Region& r, std::size_t resident) {
    if (min_resident > 0.0 && resident * 64 < r.bytes) return;
    regions.emplace_back(r.from, r.to);
  };
  char line[512];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long resident_kb = 0;
    if (std::sscanf(line, "Rss: %lu kB", &resident_kb) == 1) {
      if (pending) keep(*pending, std::size_t{resident_kb} << 10);
      pending.reset();
      continue;
    }
    unsigned long start = 0, end = 0, offset = 0, inode = 0;
    char perms[8] = {};
    char device[16] = {};
    int path_at = 0;
    if (std::sscanf(line, "%lx-%lx %7s %lx %15s %lu %n", &start, &end, perms, &offset, device, &inode, &path_at) < 6) continue;
    pending.reset();
    if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p' || inode != 0) continue;
    const std::string_view path(line + path_at);
    if (!path.empty() && path != "\n" && !path.starts_with("[heap]")) continue;  // stacks and the like
    const std::uintptr_t from = (start + kHuge - 1) & ~(kHuge - 1);
    const std::uintptr_t to = end & ~(kHuge - 1);
    if (to <= from) continue;
    pending = Region{from, to, static_cast<std::size_t>(end - start)};
  }
  std::fclose(maps);
  std::size_t total = 0;
  for (const auto& [from, to] : regions) total += to - from;
  if (total < at_least) return 0;
  // Collapsing copies what a huge page's range holds onto a huge page, and fills the
  // rest: only ranges at least `min_resident` full, so the heap's sparse corners (freed
  // blocks not yet reused) do not grow the footprint.
  const long small_page = sysconf(_SC_PAGESIZE);
  const std::size_t per_huge = small_page > 0 ? kHuge / static_cast<std::uintptr_t>(small_page) : 0;
  std::vector<unsigned char> resident(per_huge);
  const auto dense = [&](std::uintptr_t at) {
    if (min_resident <= 0.0) return true;
    if (per_huge == 0 || mincore(reinterpret_cast<void*>(at), kHuge, resident.data()) != 0) return false;
    std::size_t in = 0;
    for (const unsigned char r : resident) in += r & 1u;
    return static_cast<double>(in) >= min_resident * static_cast<double>(per_huge);
  };
  for (const auto& [from, to] : regions) {
    // Marked, the regions' later faults take huge pages; collapsed, what they hold now
    // moves onto them (a copy; a range already on a huge page is passed over).
    advise_huge_pages(reinterpret_cast<void*>(from), to - from);
    for (std::uintptr_t run = from; run < to;) {
      if (!dense(run)) {
        run += kHuge;
        continue;
      }
      std::uintptr_t run_end = run + kHuge;
      while (run_end < to && dense(run_end)) run_end += kHuge;
      if (madvise(reinterpret_cast<void*>(run), run_end - run, kCollapse) == 0) backed += run_end - run;
      run = run_end;
    }
  }
#else
  (void)at_least;
  (void)min_resident;
#endif
  return backed;
}

void HugePageKeeper::keep() {
  if (!aside_) {
    back_heap_with_huge_pages(at_least_, min_resident_);
    return;
  }
  if (pass_.valid()) {
    if (pass_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    pass_.get();
  }
  pass_ = std::async(std::launch::async, [at_least = at_least_, min_resident = min_resident_] {
    return back_heap_with_huge_pages(at_least, min_resident);
  });
}

HugePageKeeper::~HugePageKeeper() {
  if (pass_.valid()) pass_.wait();
}

}  // namespace fabricsim
