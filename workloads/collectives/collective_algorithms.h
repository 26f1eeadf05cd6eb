#pragma once
// The built-in collective algorithms, one entry each: its name, what NCCL calls it and
// whether NCCL's cost model and protocols apply, the operations it does, its program
// builder (per-rank step programs, workloads/collectives/collective.h), the links'
// latency along its critical path, the ideal network's estimate `auto` uses without
// NCCL's model, and its step footprint for the memory estimate. Each algorithm lives in
// its own file (ring.cpp, tree.cpp, ...); collective_algorithms.cpp lists them, one
// line each. Adding one: its file, plus its line there.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/collectives/collective.h"
#include "workloads/collectives/nccl_tuning.h"

namespace fabricsim {

struct TunerFacts;  // workloads/collectives/tuner.h

struct AlgorithmParams {
  int channels = 1;               // ring, tree: parallel rings / tree pairs
  std::int64_t chunk_bytes = 0;   // pipelining piece; 0: one piece per segment
  int root = 0;                   // broadcast, reduce, send_recv
  int local_size = 8;             // hierarchical: GPUs per node (ranks node-major)
  bool one_node = false;          // tree: every rank in one NVLink domain, where NCCL's tree is a chain
  std::int64_t start_latency_ps = 0;  // nvls: fixed start-up cost before any rank moves data
  // nvls, nvls_tree: the pipeline fill of NCCL's NVLS kernel (nvls_pipeline_fill_ps), in
  // rounds of its chunks through the switch at its reduction rate (algbw); 0: none.
  double nvls_stage_bytes_per_second = 0;
  double nvls_fill_rounds = 0;
  std::int64_t nvls_head_cost_ps = 0;  // and its visits to the heads (nvls_head_visits_ps); 0: free
  // direct's AllToAll as NCCL's p2p kernel runs it (workloads/collectives/nccl_p2p.h): its
  // p2p channels, each peer's bytes cut in `channels` parts on them, each channel's works in
  // NCCL's batches, one batch after another; 0: every block in one send, all at once.
  int p2p_channels = 0;
};

// What an estimate of step state needs (app/scenario/memory_estimate.cpp): the largest size's
// step programs and the check's matching queues, per rank.
struct FootprintFacts {
  std::uint64_t ranks = 2;
  std::uint64_t channels = 1;
  std::uint64_t log2_ranks = 1;  // rounded up
  // The NVSwitch layer's reduction, where the node has one (0 GPUs: none): the GPUs of a
  // node in the group, NVLS's channels and its pieces per owner and channel.
  std::uint64_t nvls_gpus = 0;
  std::uint64_t nvls_channels = 0;
  std::uint64_t nvls_pieces = 0;
  // The ring's and the tree's pieces per channel's segment (NCCL's pipeline).
  std::uint64_t pieces = 1;
};
struct ProgramFootprint {
  std::uint64_t steps = 0;           // per rank
  std::uint64_t peers = 0;           // matching queues per rank
  std::uint64_t bytes_per_step = 240;
};
// A ring's (and any algorithm's without a figure of its own): 4 steps per rank and channel.
ProgramFootprint ring_footprint(const FootprintFacts& f);

// The simulated links' own latency along an algorithm's critical path, in us: NCCL's
// latency figures include it, so a run under NCCL's model starts with the difference.
struct WireFacts {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int ranks = 2;
  int nodes = 1;
  double intra_step_us = 0;  // one step inside a node
  double inter_step_us = 0;  // one step between nodes
};

enum class ProtocolSupport : std::uint8_t {
  kNone,        // ours: the network's bytes, no NCCL protocol
  kSimpleOnly,  // NCCL runs it with Simple only (NVLS, NVLS-tree, CollNet)
  kAll,         // LL, LL128 and Simple (ring, tree)
};

struct CollectiveAlgorithm {
  const char* name = "";         // as configs and --algo name it
  const char* nccl_name = "-";   // NCCL_ALGO's word, "-" for ours
  std::optional<NcclAlgo> nccl = std::nullopt;  // in NCCL's cost model (workloads/collectives/nccl_tuning.h)
  ProtocolSupport protocols = ProtocolSupport::kNone;
  bool nvls_start = false;      // starts after the NVSwitch domain's NVLS start-up cost
  bool packet_only = false;     // needs packet fidelity and one partition (SHARP's sums)
  // Under an NCCL protocol it runs NCCL's pipeline (docs/model.md): NCCL's pieces, each
  // channel at NCCL's rate, NCCL's latency per step; without, NCCL's latency at the start.
  bool nccl_pipeline = false;
  bool (*does)(CollectiveOp op) = nullptr;
  // Throws std::invalid_argument when it cannot do `op` for this group.
  CollectiveProgram (*build)(CollectiveOp op, int ranks, std::int64_t bytes, const AlgorithmParams& params) = nullptr;
  // Without NCCL's pipeline: what its latency at the start leaves to the links.
  double (*wire_latency_us)(const WireFacts& f) = nullptr;  // null: nothing beyond the run's own
  // The ideal network's estimate (`protocol: none`), < 0 where it does not apply; null:
  // never a candidate of `auto` there.
  double (*ideal_estimate_us)(CollectiveOp op, double bytes, const TunerFacts& f) = nullptr;
  ProgramFootprint (*footprint)(const FootprintFacts& f) = ring_footprint;
};

// Every built-in algorithm, in the order help and errors list them.
const std::vector<const CollectiveAlgorithm*>& collective_algorithms();
const CollectiveAlgorithm* find_collective_algorithm(std::string_view name);
const CollectiveAlgorithm* find_collective_algorithm(NcclAlgo nccl);
const std::vector<std::string>& algorithm_names();
// NCCL's word for what ran ("MSCCL" for msccl and steps files; "-" for ours).
const char* nccl_algo_name(std::string_view algorithm);

// Ring channel `channel`'s members in ring order (position -> rank), as the ring algorithm
// lays them: across nodes (node-major ranks, local_size per node) channel ch leaves and
// enters nodes through local GPU ch or ch + 1, nodes alternating direction.
std::vector<int> ring_order(int n, int channel, const AlgorithmParams& params);

// Throws std::invalid_argument with a clear message when the algorithm does not do
// `op`, or not for this group size (e.g. halving-doubling on a non-power-of-two group).
// `bytes` follows nccl-tests: the per-rank buffer for all_reduce, broadcast, reduce and
// send_recv; the whole output for all_gather, the whole input for reduce_scatter and
// all_to_all.
CollectiveProgram build_collective(const std::string& algorithm, CollectiveOp op, int ranks, std::int64_t bytes,
                                   const AlgorithmParams& params = {});

}  // namespace fabricsim
