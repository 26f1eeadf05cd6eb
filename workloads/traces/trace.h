#pragma once
// fabricsim training traces (docs/traces.md): per rank, operations with ids and
// dependencies. Compute runs on the GPU's compute stream in trace order; communication
// (collectives over a group of ranks, sends and receives) starts as soon as its
// dependencies allow, so it overlaps compute wherever the dependencies let it.
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/core/time.h"
#include "workloads/collectives/collective.h"

namespace fabricsim {

enum class TraceOpKind : std::uint8_t { kCompute, kCollective, kSend, kRecv };

// One operation, 40 bytes: a 100,000-GPU step holds about 80 million of them, so what
// repeats (groups, keys, names) lives once in the Trace's tables and the op holds indexes,
// fields no kind shares share their place (each union member is read only for the
// kinds that set it), and its dependencies are the Trace's (Trace::deps).
struct TraceOp {
  union {
    Time duration = 0;    // compute: given directly (or, when flops > 0, from FLOPs at
    std::int64_t bytes;   //   the trace's achieved throughput); others: bytes (nccl-tests meaning)
  };
  double flops = 0;       // compute
  int id = 0;             // unique within its rank
  union {
    int peer = -1;        // send, recv
    std::uint32_t group;  // collective: Trace::groups index, member ranks in collective rank order
  };
  union {
    int tag = 0;          // send, recv: matched per (sender, receiver, tag) in order
    std::uint32_t key;    // collective: Trace::keys index, the same on every member
  };
  std::uint16_t label = 0;    // Trace::names index: what it is for (compute phase, or tp / pp / dp / ep)
  std::uint16_t algorithm = 0;      // collective: Trace::names index; "" is the run's default
  std::uint16_t process_group = 0;  // collective: Trace::names index of its Chakra pg_name, if any
  TraceOpKind kind = TraceOpKind::kCompute;
  CollectiveOp op = CollectiveOp::kAllReduce;
};
static_assert(sizeof(TraceOp) == 40);

struct Trace {
  int ranks = 0;
  double achieved_flops = 0;  // FLOP/s per GPU, for compute ops given in FLOPs
  std::string compute_model;  // how its compute times were made, where its maker says (the generator)
  std::vector<std::vector<TraceOp>> ops;        // per rank
  // Per rank, its ops' dependencies (ids of its operations that must finish first) back to
  // back: op i's are dep_lists[rank][dep_at[rank][i] .. dep_at[rank][i + 1]).
  std::vector<std::vector<int>> dep_lists;
  std::vector<std::vector<std::uint32_t>> dep_at;
  std::vector<std::vector<int>> groups{{}};     // each collective group once; 0: none
  std::vector<std::string> keys{std::string()};   // each collective's key once; 0: none
  std::vector<std::string> names{std::string()};  // labels, algorithms, process groups; 0: ""

  void set_ranks(int n);
  // Appends `op` to `rank`'s operations with these dependencies.
  TraceOp& add(int rank, TraceOp op, std::span<const int> deps = {});
  // Table indexes, each value stored once (found through an index built as they come).
  std::uint32_t group_id(const std::vector<int>& members);
  std::uint32_t key_id(const std::string& key);
  std::uint32_t new_key(std::string key);  // one the caller knows is new (no index kept)
  std::uint16_t name_id(const std::string& name);
  void drop_indexes();  // once built: the lookups are not needed to run

  const std::vector<int>& group(const TraceOp& op) const { return op.kind == TraceOpKind::kCollective ? groups[op.group] : groups[0]; }
  const std::string& key(const TraceOp& op) const { return op.kind == TraceOpKind::kCollective ? keys[op.key] : keys[0]; }
  const std::string& label(const TraceOp& op) const { return names[op.label]; }
  const std::string& algorithm(const TraceOp& op) const { return names[op.algorithm]; }
  const std::string& process_group(const TraceOp& op) const { return names[op.process_group]; }
  std::span<const int> deps(int rank, std::size_t index) const {
    const auto r = static_cast<std::size_t>(rank);
    if (r >= dep_at.size() || index + 1 >= dep_at[r].size()) return {};  // (none, or dropped: TraceReplay::trace())
    return {dep_lists[r].data() + dep_at[r][index], dep_at[r][index + 1] - dep_at[r][index]};
  }
  // `op` is one of ops[rank].
  std::span<const int> deps(int rank, const TraceOp& op) const {
    return deps(rank, static_cast<std::size_t>(&op - ops[static_cast<std::size_t>(rank)].data()));
  }
  std::size_t op_count() const;
  Time compute_time(const TraceOp& op) const;
  // How its compute ops take their time: compute_model, or what its fields say.
  std::string compute_description() const;

  struct IntsHash {
    std::size_t operator()(const std::vector<int>& v) const;
  };
  std::unordered_map<std::vector<int>, std::uint32_t, IntsHash> group_index;
  std::unordered_map<std::string, std::uint32_t> key_index;
  std::unordered_map<std::string, std::uint16_t> name_index;
};

// JSON Lines: a header {"fabricsim_trace": 1, "ranks": N, "achieved_tflops": X} (and, where
// the generator made it, "compute_model": how its compute times were made), then one
// object per operation with "rank" and the fields above (duration as "duration_us").
void write_trace(const Trace& trace, const std::string& path);
std::string trace_to_jsonl(const Trace& trace);
// Throws std::runtime_error "FILE:LINE: what" on malformed input.
Trace read_trace(const std::string& path);
Trace parse_trace(const std::string& text, const std::string& name);
// Ids unique, dependencies known, collectives agree across their group, sends match
// receives. Returns the first problem.
std::string check_trace(const Trace& trace);

}  // namespace fabricsim
