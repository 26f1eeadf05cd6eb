#include "app/huge_pages.h"

#if defined(__linux__)
#include <sys/mman.h>
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

}  // namespace fabricsim
