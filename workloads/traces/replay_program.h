#pragma once
// A trace's operations as the replay runs them (trace_replay.h): each rank's operations'
// states, their programs (what ranks running the same one share) and their children (the
// operations that wait for each), both kept once per shape. Taken from a trace rank by
// rank, so a generated step goes in as it is made: the trace never holds every rank's
// operations at once (80 million at 100,000 GPUs), and each rank's are copied while they
// are still in cache.
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
  // A rank's own part of an operation, beside its state: what tells apart ranks that run
  // the same program (a collective's group and key, a send's or receive's peer and tag).
  // The rest is its program's, kept once for all of them (data-parallel replicas and a
  // stage's tensor-parallel ranks: 8 programs for a 100,000-GPU step's 80 million
  // operations). Two to a cache line.
  struct alignas(32) OpSlot {
    OpState st;
    std::uint32_t who = 0;    // group (collective), peer (send, recv)
    std::uint32_t which = 0;  // key (collective), tag (send, recv)
  };
  static_assert(sizeof(OpSlot) == 32);
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
  // Operation `op` of `rank` as the trace had it; the rank's program; and what of the
  // operation its program holds (all but group, key, peer and tag, which are the slot's).
  TraceOp op(int rank, int op) const;
  const std::vector<TraceOp>& program(int rank) const { return programs[rank_program[static_cast<std::size_t>(rank)]]; }
  const TraceOp& shared(int rank, int op) const { return program(rank)[static_cast<std::size_t>(op)]; }
  std::span<const int> children(int rank, int op) const {
    const ChildLists& c = child_lists[rank_children[static_cast<std::size_t>(rank)]];
    const std::uint32_t from = c.at[static_cast<std::size_t>(op)];
    return {c.list.data() + from, c.at[static_cast<std::size_t>(op) + 1] - from};
  }

  std::vector<std::vector<OpSlot>> slots;     // by rank
  std::vector<std::vector<TraceOp>> programs;  // each different one once (group, key, peer and tag 0)
  std::vector<std::uint32_t> rank_program;     // by rank: its programs entry
  std::vector<ChildLists> child_lists;        // each different one once
  std::vector<std::uint32_t> rank_children;   // by rank: its child_lists entry
  // Collectives whose lowest member a rank is, in rank then operation order: their keys
  // and their groups' sizes (the replay deals their order keys in this order).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> first_keys;
  // By rank: a collective of it names an algorithm of its own, or is an AllToAll or a
  // SendRecv (what the replay checks against the endpoints before the run).
  std::vector<bool> names_algorithm;

 private:
  std::uint32_t keep_program();  // program_'s entry in programs (added if new)
  std::vector<int> lowest_;  // by trace group: its lowest member, -1 until seen
  std::unordered_multimap<std::size_t, std::uint32_t> kept_;  // child lists by hash
  std::unordered_multimap<std::size_t, std::uint32_t> kept_programs_;  // programs by hash
  std::vector<TraceOp> program_;     // the rank being taken, its own parts cleared
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
