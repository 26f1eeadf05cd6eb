#pragma once
// fabricsim training traces (docs/traces.md): per rank, operations with ids and
// dependencies. Compute runs on the GPU's compute stream in trace order; communication
// (collectives over a group of ranks, sends and receives) starts as soon as its
// dependencies allow, so it overlaps compute wherever the dependencies let it.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.h"
#include "workloads/collective.h"

namespace fabricsim {

enum class TraceOpKind : std::uint8_t { kCompute, kCollective, kSend, kRecv };

struct TraceOp {
  int id = 0;                 // unique within its rank
  TraceOpKind kind = TraceOpKind::kCompute;
  Time duration = 0;          // compute: given directly, or
  double flops = 0;           //   from FLOPs at the trace's achieved throughput
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::int64_t bytes = 0;     // collective (nccl-tests meaning), send, recv
  std::vector<int> group;     // collective: member ranks, in collective rank order
  std::string process_group;  // collective: its process group's name (Chakra pg_name), if any
  std::string key;            // collective: the same on every member
  std::string algorithm;      // collective: default ring
  int peer = -1;              // send, recv
  int tag = 0;                // send, recv: matched per (sender, receiver, tag) in order
  std::vector<int> deps;      // ids of this rank's operations that must finish first
  std::string label;          // what it is for: compute phase, or tp / pp / dp / ep
};

struct Trace {
  int ranks = 0;
  double achieved_flops = 0;  // FLOP/s per GPU, for compute ops given in FLOPs
  std::vector<std::vector<TraceOp>> ops;  // per rank

  Time compute_time(const TraceOp& op) const;
};

// JSON Lines: a header {"fabricsim_trace": 1, "ranks": N, "achieved_tflops": X}, then one
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
