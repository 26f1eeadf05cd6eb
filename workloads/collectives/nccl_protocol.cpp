#include "workloads/collectives/nccl_protocol.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace fabricsim {

const char* protocol_name(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kSimple: return "Simple";
    case NcclProtocol::kLL: return "LL";
    case NcclProtocol::kLL128: return "LL128";
    case NcclProtocol::kNone: break;
  }
  return "-";
}

std::optional<NcclProtocol> protocol_from_name(std::string_view name) {
  std::string s(name);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "none") return NcclProtocol::kNone;
  if (s == "simple") return NcclProtocol::kSimple;
  if (s == "ll") return NcclProtocol::kLL;
  if (s == "ll128") return NcclProtocol::kLL128;
  return std::nullopt;
}

std::int64_t nccl_piece_bytes(NcclProtocol p, const NcclPipelineFacts& f) {
  constexpr std::int64_t kSteps = 8;
  switch (p) {
    case NcclProtocol::kSimple: {
      const std::int64_t step = std::max<std::int64_t>(1, f.simple_buffer_bytes / kSteps);
      const bool two_step_slices = !f.tree && (f.op == CollectiveOp::kAllReduce || f.op == CollectiveOp::kAllGather ||
                                               f.op == CollectiveOp::kReduceScatter);
      if (!two_step_slices) return step;
      const std::int64_t segment = f.bytes / std::max(1, f.ranks) / std::max(1, f.channels);
      return std::max<std::int64_t>(1, std::min(2 * step, (segment + 1) / 2));
    }
    case NcclProtocol::kLL: return std::int64_t{8} * 512 * kSteps * 16 / kSteps / 2;
    case NcclProtocol::kLL128: {
      std::int64_t chunk = std::int64_t{120} * 640 * kSteps * 8 / kSteps / 16 * 15;
      if (f.tree) {
        const double ppn = static_cast<double>(std::max(1, f.ranks)) / std::max(1, f.nodes);
        int log2_nodes = 0;
        while ((2 << log2_nodes) <= std::max(1, f.nodes)) ++log2_nodes;
        const double steps = 1 + log2_nodes + 0.1 * ppn;
        const std::int64_t per = std::int64_t{std::max(1, f.channels)};
        while (static_cast<double>(f.bytes / (per * chunk)) < steps * 64 / ppn && chunk > 131072) chunk /= 2;
        while (static_cast<double>(f.bytes / (per * chunk)) < steps * 16 / ppn && chunk > 32768) chunk /= 2;
      }
      return chunk;
    }
    case NcclProtocol::kNone: break;
  }
  return 0;
}

std::int64_t nccl_pieces(NcclProtocol p, const NcclPipelineFacts& f) {
  const std::int64_t piece = nccl_piece_bytes(p, f);
  if (piece <= 0) return 1;
  const std::int64_t c = std::max(1, f.channels);
  const bool ring_segments = !f.tree && (f.op == CollectiveOp::kAllReduce || f.op == CollectiveOp::kAllGather ||
                                         f.op == CollectiveOp::kReduceScatter);
  const std::int64_t segment = f.tree ? f.bytes / 2 / c : ring_segments ? f.bytes / std::max(1, f.ranks) / c : f.bytes / c;
  return std::clamp<std::int64_t>((segment + piece - 1) / piece, 1, 4096);
}

std::int64_t nccl_nvls_chunk_bytes(bool tree, std::int64_t bytes, int channels, int heads, int nodes) {
  constexpr std::int64_t kNvlsChunk = 128 * 1024;
  const auto concurrent = static_cast<std::int64_t>(std::max(1, channels)) * std::max(1, heads);
  std::int64_t chunk = kNvlsChunk;
  const auto shrink = [&](std::int64_t times, std::int64_t above, std::int64_t to) {
    if (bytes < times * concurrent * chunk && chunk > above) chunk = to;
  };
  if (tree) {
    if (nodes >= 4) chunk = 64 * 1024;
    shrink(32, 262144, 262144);
    shrink(16, 131072, 131072);
    shrink(4, 65536, 65536);
    shrink(1, 32768, 32768);
  } else {
    shrink(64, 65536, 65536);
    shrink(8, 32768, 32768);
    shrink(2, 16384, 16384);
  }
  return chunk;
}

double protocol_wire_factor(NcclProtocol p) {
  if (p == NcclProtocol::kLL) return 2.0;  // an 8-byte flag beside every 8 bytes of data
  if (p == NcclProtocol::kLL128) return 128.0 / 120.0;
  return 1.0;
}

}  // namespace fabricsim
