#pragma once
// A trace's operations as the replay runs them (trace_replay.h): each rank's operations
// beside their states, and their children (the operations that wait for each), kept once
// per dependency shape. Taken from a trace rank by rank, so a generated step goes in as it
// is made: the trace never holds every rank's operations at once (80 million at 100,000
// GPUs), and each rank's are copied while they are still in cache.
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/time.h"
#include "workloads/traces/trace.h"

namespace fabricsim {

class ReplayProgram {
 public:
  // What the replay keeps of each operation as it runs.
  struct OpState {
    Time start = -1;
    Time end = -1;
    std::int32_t waiting = 0;  // dependencies not yet finished; kReady once it was ready
    bool ready() const { return waiting == kReady; }
  };
  static constexpr std::int32_t kReady = -1;
  // An operation and its state in one cache line: finishing an operation and readying
  // its children reads both, and at 100,000 ranks each is a miss of its own when apart.
  struct alignas(64) OpSlot {
    TraceOp op;
    OpState st;
  };
  static_assert(sizeof(OpSlot) == 64);
  // A rank's operations' children, back to back: op i's are list[at[i] .. at[i + 1]).
  // Ranks whose dependencies are the same share one: data-parallel replicas and a stage's
  // tensor-parallel ranks run the same program, so a 100,000-GPU step has 8 of them (one
  // per pipeline stage), read from the caches rather than each rank's own from memory.
  struct ChildLists {
    std::vector<std::uint32_t> at;
    std::vector<int> list;
  };

  // Moves the next rank's operations and dependencies out of `trace` (ranks are taken in
  // order from 0; the trace's tables already hold what the rank's operations name).
  // Throws std::invalid_argument for a rank of 2^31 operations or more, or dependencies
  // on ids the rank does not have.
  void take_rank(Trace& trace);
  int ranks() const { return static_cast<int>(slots.size()); }
  std::span<const int> children(int rank, int op) const {
    const ChildLists& c = child_lists[rank_children[static_cast<std::size_t>(rank)]];
    const std::uint32_t from = c.at[static_cast<std::size_t>(op)];
    return {c.list.data() + from, c.at[static_cast<std::size_t>(op) + 1] - from};
  }

  std::vector<std::vector<OpSlot>> slots;     // by rank
  std::vector<ChildLists> child_lists;        // each different one once
  std::vector<std::uint32_t> rank_children;   // by rank: its child_lists entry
  // Collectives whose lowest member a rank is, in rank then operation order: their keys
  // and their groups' sizes (the replay deals their order keys in this order).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> first_keys;
  // By rank: a collective of it names an algorithm of its own, or is an AllToAll or a
  // SendRecv (what the replay checks against the endpoints before the run).
  std::vector<bool> names_algorithm;

 private:
  std::vector<int> lowest_;  // by trace group: its lowest member, -1 until seen
  std::unordered_multimap<std::size_t, std::uint32_t> kept_;  // child lists by hash
  ChildLists lists_;                 // the rank being taken
  std::vector<std::uint32_t> next_;  // where each op's next child goes
};

// A trace whose operations went into a ReplayProgram as it was made: the trace keeps its
// tables (groups, keys, names) and its rank count.
struct PreparedTrace {
  Trace trace;
  ReplayProgram program;
};

}  // namespace fabricsim
