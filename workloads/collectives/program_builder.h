#pragma once
// What the built-in algorithms share while they compile a collective to per-rank
// programs: appending steps, an empty program, pipelining pieces, and the ring phase the
// ring and the hierarchical algorithm both run. Only the algorithms' own files use it.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "workloads/collectives/collective.h"

namespace fabricsim::collective_building {

inline int mod(int a, int n) { return ((a % n) + n) % n; }
inline bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

// Appends steps to rank programs and returns their indices.
struct Builder {
  CollectiveProgram& p;
  int add(int rank, Step s) {
    auto& steps = p.programs[static_cast<std::size_t>(rank)].steps;
    steps.push_back(std::move(s));
    return static_cast<int>(steps.size()) - 1;
  }
  int send(int rank, int peer, int channel, int src, int count, std::vector<int> deps) {
    Step s;
    s.kind = StepKind::kSend;
    s.peer = peer;
    s.channel = channel;
    s.src = src;
    s.count = count;
    s.deps = std::move(deps);
    return add(rank, std::move(s));
  }
  int recv(int rank, int peer, int channel, int dst, int count, bool reduce, std::vector<int> deps) {
    Step s;
    s.kind = reduce ? StepKind::kRecvReduce : StepKind::kRecv;
    s.peer = peer;
    s.channel = channel;
    s.dst = dst;
    s.count = count;
    s.deps = std::move(deps);
    return add(rank, std::move(s));
  }
  int copy(int rank, int src, int dst, int count) {
    Step s;
    s.kind = StepKind::kCopy;
    s.src = src;
    s.dst = dst;
    s.count = count;
    return add(rank, std::move(s));
  }
};

inline std::vector<int> deps_of(int a) { return a >= 0 ? std::vector<int>{a} : std::vector<int>{}; }
inline std::vector<int> deps_of(int a, int b) {
  std::vector<int> d;
  if (a >= 0) d.push_back(a);
  if (b >= 0 && b != a) d.push_back(b);
  return d;
}

inline CollectiveProgram empty_program(const std::string& name, CollectiveOp op, int ranks, int chunks, std::int64_t bytes,
                                int slots = -1) {
  CollectiveProgram p;
  p.name = name;
  p.op = op;
  p.ranks = ranks;
  p.chunks = chunks;
  p.slots = slots < 0 ? chunks : slots;
  p.slot_bytes = std::max<std::int64_t>(1, (bytes + chunks - 1) / chunks);
  p.programs.resize(static_cast<std::size_t>(ranks));
  return p;
}

// Pieces per segment for pipelining.
inline int pieces(std::int64_t segment_bytes, std::int64_t chunk_bytes) {
  if (chunk_bytes <= 0 || segment_bytes <= chunk_bytes) return 1;
  return static_cast<int>(std::min<std::int64_t>(4096, (segment_bytes + chunk_bytes - 1) / chunk_bytes));
}

// Ring over `members` (ring position -> rank). Segment j of piece stream q occupies
// `width` slots from slot(j, q). Reduce-scatter leaves member i owning segment i;
// all-gather starts from that. `after[i]` is a step member i's first send waits on;
// returns, per member, its last step (or -1). Sends of a stream wait for the previous
// stream's send at the same position, so pieces flow in order like NCCL's slices.
struct RingPlan {
  std::vector<int> members;
  int streams = 1;
  int width = 1;
  int channel_base = 0;
  std::function<int(int segment, int stream)> slot;
};

std::vector<int> ring_phase(Builder& b, const RingPlan& plan, bool reduce_scatter, const std::vector<int>& after);

}  // namespace fabricsim::collective_building
