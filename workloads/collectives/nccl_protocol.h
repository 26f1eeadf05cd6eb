#pragma once
// NCCL's protocols as its cost model states them (src/graph/tuning.cc in NVIDIA/nccl;
// "Demystifying NCCL", arXiv 2507.04786, describes the same pipeline):
//   Simple: data in large slices, one flag per slice; highest bandwidth, highest latency.
//   LL:     8 bytes of data with an 8-byte flag in each 16-byte store: half the wire bytes
//           are flags, latency lowest.
//   LL128:  120 bytes of data with an 8-byte flag in each 128-byte line.
// fabricsim moves the protocol's bytes through the packet network (LL: 2x, its flags
// doubling the bytes; LL128: 128/120) and adds NCCL's own latency for the algorithm and protocol
// (workloads/collectives/nccl_tuning.h), less what the simulated links charge themselves, at the
// collective's start; `none` is the ideal network alone.
#include <cstdint>
#include <optional>
#include <string_view>

#include "workloads/collectives/collective.h"

namespace fabricsim {

enum class NcclProtocol : std::uint8_t { kNone, kSimple, kLL, kLL128 };

const char* protocol_name(NcclProtocol p);  // "-", "Simple", "LL", "LL128"
// "none", "simple", "ll", "ll128" (any case); nullopt for others.
std::optional<NcclProtocol> protocol_from_name(std::string_view name);

// Bytes moved per payload byte: 1 (Simple), 2 (LL), 128/120 (LL128).
double protocol_wire_factor(NcclProtocol p);

}  // namespace fabricsim
