#pragma once
// NCCL's protocols as its cost model states them (src/graph/tuning.cc in NVIDIA/nccl;
// "Demystifying NCCL", arXiv 2507.04786, describes the same pipeline):
//   Simple: data in large slices, one flag per slice; highest bandwidth, highest latency.
//   LL:     8 bytes of data with an 8-byte flag in each 16-byte store: half the wire bytes
//           are flags, latency lowest.
//   LL128:  120 bytes of data with an 8-byte flag in each 128-byte line.
// fabricsim moves the protocol's bytes through the packet network (LL: 2x, its flags
// doubling the bytes; LL128: 128/120) in the pieces NCCL's buffers pipeline them in, and
// charges NCCL's own latency figures (workloads/collectives/nccl_tuning.h): for the ring
// and the tree per step along the simulated chain, for the others at the collective's
// start, less what the simulated links charge themselves; `none` is the ideal network
// alone.
#include <cstdint>
#include <optional>
#include <string_view>

#include "workloads/collectives/collective.h"

namespace fabricsim {

enum class NcclProtocol : std::uint8_t { kNone, kSimple, kLL, kLL128 };

const char* protocol_name(NcclProtocol p);  // "-", "Simple", "LL", "LL128"
// "none", "simple", "ll", "ll128" (any case); nullopt for others.
std::optional<NcclProtocol> protocol_from_name(std::string_view name);

// The piece NCCL's NVLS and NVLS-tree pipeline their buffers in (calcCollChunking in
// src/enqueue.cc, NCCL 2.28): NCCL_NVLS_CHUNKSIZE (128 KiB), NVLS-tree's capped at 64 KiB
// over 4 nodes or more. With `concurrent` = channels x heads (the GPUs per node that
// carry the NVLS sums, one per NIC across nodes), smaller operations take smaller pieces:
// NVLS 64 KiB under 64 x concurrent x chunk bytes, 32 KiB under 8 x, 16 KiB under 2 x;
// NVLS-tree 64 KiB under 4 x, 32 KiB under 1 x (each test against the chunk so far).
std::int64_t nccl_nvls_chunk_bytes(bool tree, std::int64_t bytes, int channels, int heads, int nodes);

// Bytes moved per payload byte: 1 (Simple), 2 (LL), 128/120 (LL128).
double protocol_wire_factor(NcclProtocol p);

// Simple's buffer as NCCL sizes it by default (DEFAULT_BUFFSIZE, src/init.cc).
inline constexpr std::int64_t kNcclDefaultSimpleBuffer = std::int64_t{4} << 20;

// The payload NCCL's ring and tree hand from one GPU to the next in one go, each with its
// own flag: a slice of its buffer's steps. NCCL's defaults (src/include/device.h,
// src/init.cc, src/include/collectives.h, calcCollChunking in src/enqueue.cc): 8 steps
// per buffer (NCCL_STEPS). Simple's buffer is 4 MiB (NCCL_BUFFSIZE sets it), a step 512
// KiB, and the ring's AllReduce, AllGather and ReduceScatter move slices of 2 steps (1
// MiB), everything else one step; LL's buffer is 512 KiB (8 lines of 16 bytes x 512
// threads x 8 steps), half of it flags: 32 KiB of data per step; LL128's is 120 x 640 x 8 x 8 bytes, 15 of each 16
// words data: 576,000 bytes per step, which the tree halves for small operations while
// the operation has fewer than (1 + log2(nodes) + ppn/10) x 64 / ppn pieces per channel
// (down to 128 KiB), then x 16 / ppn (down to 32 KiB). A ring's Simple chunk smaller
// than the buffer's (what is left of the operation) still goes in two slices
// (SLICESPERCHUNK). 0 for kNone.
struct NcclPipelineFacts {
  bool tree = false;  // NCCL's tree (else the ring)
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::int64_t bytes = 0;  // the operation's
  int channels = 1;
  int ranks = 1;
  int nodes = 1;
  std::int64_t simple_buffer_bytes = kNcclDefaultSimpleBuffer;  // Simple's, NCCL_STEPS steps of it
};
std::int64_t nccl_piece_bytes(NcclProtocol p, const NcclPipelineFacts& f);
// The pieces of one channel's segment (the ring's per-rank share, the tree's half, a
// pipeline's whole), as the builders cut it (at most 4096).
std::int64_t nccl_pieces(NcclProtocol p, const NcclPipelineFacts& f);

}  // namespace fabricsim
