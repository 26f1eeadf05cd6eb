#pragma once
// What crosses between partitions of a split run: packets on cut links. A partition's
// cut links write into its outbox during a window; between windows each partition
// takes what the others wrote for it and hands the packets to its own side of the
// link (sim/net/link.h). The packet travels by value with its INT stack (pools and their
// side tables are per partition), as it would travel between MPI ranks.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "sim/core/packet.h"
#include "sim/net/telemetry.h"
#include "sim/core/time.h"

namespace fabricsim {

struct CrossPacket {
  Time arrives;
  std::uint32_t link;  // the link's number among its receiving partition's cut links
  Packet packet;
  IntStack telemetry;  // meaningful only when the pools carry telemetry
};

static_assert(std::is_trivially_copyable_v<CrossPacket>, "cut-link packets travel between processes as bytes");

// One partition's packets for the others, by receiving partition, in the order sent.
struct Outbox {
  std::vector<std::vector<CrossPacket>> to;
};

}  // namespace fabricsim
