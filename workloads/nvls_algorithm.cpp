#include "workloads/nvls_algorithm.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fabricsim {

CollectiveProgram nvls(CollectiveOp op, int n, std::int64_t bytes, const AlgorithmParams& a) {
  const bool reduce = op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter;
  const bool gather = op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather;
  if (!reduce && !gather) throw std::invalid_argument(std::string("nvls does not do ") + op_name(op));
  const int channels = a.channels > 1 ? a.channels : kNvlsChannels;
  // Pieces per (owner, channel): NCCL's NVLS chunk unless told otherwise.
  const std::int64_t chunk = a.chunk_bytes > 0 ? a.chunk_bytes : kNvlsChunkBytes;
  const std::int64_t share = std::max<std::int64_t>(1, bytes / n / channels);
  const int k = static_cast<int>(std::min<std::int64_t>(4096, (share + chunk - 1) / chunk));
  CollectiveProgram p;
  p.name = "nvls";
  p.start_latency_ps = a.start_latency_ps;
  p.op = op;
  p.ranks = n;
  p.chunks = n * channels * k;
  p.slots = p.chunks;
  p.slot_bytes = std::max<std::int64_t>(1, (bytes + p.chunks - 1) / p.chunks);
  p.programs.resize(static_cast<std::size_t>(n));
  // Owner-major slots, so that owner q's share is the contiguous block q (what
  // reduce_scatter leaves and all_gather starts from).
  const auto slot = [&](int owner, int channel, int piece) { return (owner * channels + channel) * k + piece; };
  const auto add = [&](int rank, Step s) {
    auto& steps = p.programs[static_cast<std::size_t>(rank)].steps;
    steps.push_back(std::move(s));
    return static_cast<int>(steps.size()) - 1;
  };
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < channels; ++c) {
      // Contributions in piece order, owners in turn, one after another per channel (as
      // a channel's threads walk the buffer), so the first sums are ready early and
      // their multicasts overlap the later contributions.
      int previous = -1;
      if (reduce) {
        for (int j = 0; j < k; ++j) {
          for (int q = 0; q < n; ++q) {
            Step s;
            s.kind = StepKind::kSwitchReduce;
            s.peer = q;
            s.channel = c;
            s.src = slot(q, c, j);
            if (previous >= 0) s.deps = {previous};
            previous = add(r, std::move(s));
          }
        }
      }
      // This rank's own pieces: take each sum, then multicast it (all_gather: multicast
      // the input at once).
      int previous_multicast = -1;
      for (int j = 0; j < k; ++j) {
        int sum = -1;
        if (reduce) {
          Step s;
          s.kind = StepKind::kRecvSum;
          s.channel = c;
          s.dst = slot(r, c, j);
          sum = add(r, std::move(s));
        }
        if (gather) {
          Step s;
          s.kind = StepKind::kMulticast;
          s.channel = c;
          s.src = slot(r, c, j);
          if (sum >= 0) s.deps.push_back(sum);
          if (previous_multicast >= 0) s.deps.push_back(previous_multicast);
          previous_multicast = add(r, std::move(s));
        }
      }
      if (!gather) continue;
      // Every owner's multicasts, this rank's own included, in the order they are sent.
      for (int q = 0; q < n; ++q) {
        for (int j = 0; j < k; ++j) {
          Step s;
          s.kind = StepKind::kRecv;
          s.peer = q;
          s.channel = c;
          s.dst = slot(q, c, j);
          add(r, std::move(s));
        }
      }
    }
  }
  return p;
}

}  // namespace fabricsim
