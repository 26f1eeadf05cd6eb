#include "workloads/collectives/nccl_p2p.h"

#include <algorithm>
#include <numeric>

namespace fabricsim {

namespace {

constexpr int kMaxChannels = 64;         // MAXCHANNELS
constexpr int kWorksPerBatch = 8;        // NCCL_MAX_DEV_WORK_P2P_PER_BATCH
constexpr int kScheduleGroupSize = 8;    // NCCL_P2P_SCHEDULE_GROUP_SIZE
constexpr std::int64_t kLLThreshold = 16 * 1024;   // NCCL_P2P_LL_THRESHOLD
constexpr std::int64_t kLLStep = 512 * 1024 / 8;   // LL's buffer over NCCL_STEPS
constexpr std::int64_t kNvlChunk = 512 * 1024;     // NCCL_P2P_NVL_CHUNKSIZE
constexpr std::int64_t kNetChunk = 128 * 1024;     // NCCL_P2P_NET_CHUNKSIZE

int pow2_up(int x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}
int log2_of(int pow2) {
  int b = 0;
  while ((1 << b) < pow2) ++b;
  return b;
}
int reverse_bits(int x, int bits) {
  int r = 0;
  for (int i = 0; i < bits; ++i) r |= ((x >> i) & 1) << (bits - 1 - i);
  return r;
}
std::int64_t div_up(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Parts of `bytes` with steps of `step`: NCCL's nChannels for one direction.
int parts_for(std::int64_t bytes, std::int64_t step, int channels_min, int channels_max, bool across_nodes) {
  if (bytes <= 0) return 1;
  const std::int64_t min_part = across_nodes ? step / 2 : step / 8;
  const std::int64_t max_part = across_nodes ? step : step * 32;
  int parts = static_cast<int>(std::min<std::int64_t>(channels_min, div_up(bytes, min_part)));
  std::int64_t part = std::max(min_part, div_up(bytes, parts));
  while (part > max_part && parts <= channels_max / 2) {
    parts *= 2;
    part = div_up(bytes, parts);
  }
  return parts;
}

// The p2p schedule's group size (ncclP2pSchedule): NCCL's default, down to what divides a node.
int schedule_group_size(const NcclP2pFacts& f) {
  const int local = std::max(1, f.nodes > 1 ? f.gpus_per_node : f.ranks);
  int g = kScheduleGroupSize;
  if (local % g != 0 || local < g) g = std::gcd(g, local);
  return std::max(1, g);
}

}  // namespace

int nccl_p2p_channel(const NcclP2pFacts& f, int p2p_channels, int round, int part) {
  int base = round;
  if (f.nodes > 1) {
    const int local = schedule_group_size(f);
    base = (round / local) * ((local + kWorksPerBatch - 1) / kWorksPerBatch) + (round % local) / kWorksPerBatch;
  }
  const int bits = log2_of(p2p_channels);
  base = reverse_bits(base & (p2p_channels - 1), bits);
  return (base + part) & (p2p_channels - 1);
}

std::vector<int> nccl_p2p_batches(const NcclP2pFacts& f, int p2p_channels, int parts) {
  std::vector<int> batch_of(static_cast<std::size_t>(f.ranks) * static_cast<std::size_t>(parts), 0);
  // Per channel: its batches so far, the open one's works and its first round.
  std::vector<int> batches(static_cast<std::size_t>(p2p_channels), 0), works(batches.size(), 0), epoch(batches.size(), -1);
  for (int round = 0; round < f.ranks; ++round) {
    for (int part = 0; part < parts; ++part) {
      const auto c = static_cast<std::size_t>(nccl_p2p_channel(f, p2p_channels, round, part));
      // A new batch when the open one is full or of another epoch of rounds (addWorkBatchToPlan).
      if (works[c] == 0 || works[c] == kWorksPerBatch || epoch[c] != round / kWorksPerBatch) {
        ++batches[c];
        works[c] = 0;
        epoch[c] = round / kWorksPerBatch;
      }
      ++works[c];
      batch_of[static_cast<std::size_t>(round) * static_cast<std::size_t>(parts) + static_cast<std::size_t>(part)] = batches[c] - 1;
    }
  }
  return batch_of;
}

NcclP2pPlan nccl_p2p_plan(const NcclP2pFacts& f) {
  NcclP2pPlan plan;
  const bool across = f.nodes > 1;
  const int comm = std::clamp(f.comm_channels, 1, kMaxChannels);
  // ncclTopoComputeP2pChannels: the fewest any peer gets, as powers of two.
  int per_peer = comm;
  const int local_peers = across ? f.gpus_per_node : f.ranks;
  if (local_peers > 1) per_peer = std::min(per_peer, f.nvlinks_per_gpu > 0 ? 2 * f.nvlinks_per_gpu : 2);
  plan.p2p_channels = std::min(pow2_up(comm), kMaxChannels);
  if (across) {
    int net = 2;
    while (net * f.ranks > plan.p2p_channels * 4 && net > 1) net /= 2;
    per_peer = std::min(per_peer, std::max(net, std::max(1, f.nics_per_node / std::max(1, f.gpus_per_node))));
  }
  plan.channels_per_peer = std::min(pow2_up(per_peer), plan.p2p_channels);
  int channels_min = plan.channels_per_peer;
  while (channels_min * f.ranks > plan.p2p_channels && channels_min > 1) channels_min /= 2;

  const std::int64_t bytes = std::max<std::int64_t>(0, f.bytes_per_peer);
  const std::int64_t simple_step =
      std::max<std::int64_t>(1, std::min(across ? kNetChunk : kNvlChunk, f.simple_buffer_bytes / 8));
  if (f.nccl_minor >= 29) {
    plan.parts = parts_for(bytes, simple_step, channels_min, plan.channels_per_peer, across);
    plan.protocol = bytes <= plan.parts * kLLThreshold ? NcclProtocol::kLL : NcclProtocol::kSimple;
  } else if (f.nccl_minor >= 22) {
    plan.protocol = bytes <= plan.channels_per_peer * kLLThreshold ? NcclProtocol::kLL : NcclProtocol::kSimple;
    plan.parts = parts_for(bytes, plan.protocol == NcclProtocol::kLL ? kLLStep : simple_step, channels_min,
                           plan.channels_per_peer, across);
  } else {
    plan.protocol = bytes <= kLLThreshold ? NcclProtocol::kLL : NcclProtocol::kSimple;
    plan.parts = parts_for(bytes, simple_step, channels_min, plan.channels_per_peer, across);
  }
  if (f.protocol == NcclProtocol::kLL || f.protocol == NcclProtocol::kSimple) plan.protocol = f.protocol;
  plan.step_bytes = plan.protocol == NcclProtocol::kLL ? kLLStep : simple_step;
  plan.part_bytes = div_up(std::max<std::int64_t>(1, bytes), plan.parts);

  // The busiest channel: its batches, and the most remote sends one batch holds (round 0
  // is the rank's copy to itself).
  const std::vector<int> batch_of = nccl_p2p_batches(f, plan.p2p_channels, plan.parts);
  std::vector<std::vector<int>> sends(static_cast<std::size_t>(plan.p2p_channels));
  for (int round = 0; round < f.ranks; ++round) {
    for (int part = 0; part < plan.parts; ++part) {
      auto& on = sends[static_cast<std::size_t>(nccl_p2p_channel(f, plan.p2p_channels, round, part))];
      const auto b = static_cast<std::size_t>(batch_of[static_cast<std::size_t>(round * plan.parts + part)]);
      if (on.size() <= b) on.resize(b + 1, 0);
      on[b] += round != 0;
    }
  }
  plan.batches = 1;
  plan.most_sends_per_batch = 1;
  for (const auto& on : sends) {
    plan.batches = std::max(plan.batches, static_cast<int>(on.size()));
    for (int s : on) plan.most_sends_per_batch = std::max(plan.most_sends_per_batch, s);
  }
  return plan;
}

double nccl_p2p_batch_sync_us(const NcclP2pPlan& plan, const NcclP2pKernel& k) {
  if (plan.protocol == NcclProtocol::kLL) return k.ll_batch_us;
  const double drain = k.drain_GBps > 0 ? static_cast<double>(std::min(plan.part_bytes, plan.step_bytes)) / (k.drain_GBps * 1e3) : 0;
  return k.batch_us + drain;
}

double nccl_p2p_kernel_time_us(const NcclP2pPlan& plan, const NcclP2pKernel& k) {
  const double rate = plan.protocol == NcclProtocol::kLL ? k.ll_channel_GBps : k.channel_GBps;
  const double transfer = rate > 0 ? static_cast<double>(plan.most_sends_per_batch) * static_cast<double>(plan.part_bytes) / (rate * 1e3) : 0;
  return k.launch_us + plan.batches * (nccl_p2p_batch_sync_us(plan, k) + transfer);
}

}  // namespace fabricsim
