#pragma once
// Asks the operating system to back a large, long-lived region with huge pages (Linux
// transparent huge pages, where they are enabled for regions that ask: "madvise" or
// "always"); elsewhere it does nothing. The packet pool's chunks use it: at scale a run
// reads millions of packets in no order, and with 4 KiB pages nearly every read also
// walks the page table.
#include <cstddef>

namespace fabricsim {

void advise_huge_pages(void* region, std::size_t bytes);

}  // namespace fabricsim
