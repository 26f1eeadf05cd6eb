#pragma once
// `algorithm: auto`: picks a collective's algorithm per size the way NCCL's tuner does.
// With protocols on (`auto` or a named one) every candidate NCCL has here (ring; NCCL's
// tree for AllReduce across whole nodes; NVLS on one NVSwitch domain whose switches
// reduce; NVLS-tree across such nodes; CollNet Direct where the rail switches run SHARP)
// is costed per protocol by NCCL's own model (workloads/collectives/nccl_tuning.h) for the chosen
// NCCL release, and the least predicted time wins, as NCCL picks. With `protocol: none`
// (the ideal network) the estimate is the network's alone: latency + size / bandwidth.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/collectives/collective.h"
#include "workloads/collectives/nccl_p2p.h"
#include "workloads/collectives/nccl_protocol.h"
#include "workloads/collectives/nccl_tuning.h"

namespace fabricsim {

// What the estimate needs from the topology, per GPU and per node.
struct TunerFacts {
  int ranks = 0;
  int gpus_per_node = 1;   // ranks node-major (0: nodes holding different counts)
  int nodes = 1;
  double nvlink_GBps = 0;  // a GPU into its NVSwitch layer, per direction (0: no NVLink)
  double node_nic_GBps = 0;  // all of a node's NICs together, per direction (0: one node)
  double nvls_GBps = 0;      // the NVSwitch layer's reduction rate (0: no NVLS)
  double nvls_latency_us = 0;
  double nvls_fill_rounds = 0;  // the NVLS kernel's pipeline fill (nvls_pipeline_fill_ps), from the topology
  double nvls_head_cost_us = 0;  // and its cost per visit to a head (nvls_head_visits_ps)
  double hop_latency_us = 0;  // one link, typical
  // The simulated network's own latency for one ring step: GPU to GPU through the
  // NVSwitch inside a node; through PCIe, the NICs and the fabric between nodes.
  double intra_step_us = 0;
  double inter_step_us = 0;
  bool sharp = false;         // the rail switches reduce (InfiniBand SHARP): CollNet
  int nics_per_node = 0;      // CollNet Direct's heads
  double nic_GBps = 0;        // one NIC, per direction
  int compute_capability = 90;
  std::string nccl_version = kDefaultNcclVersion;
  NcclCpu cpu = NcclCpu::kIntel;
  // NCCL_MIN_CTAS and NCCL_MAX_CTAS (0: unset): the communicator's channels at least and at
  // most this many (nccl_comm_channels).
  int min_ctas = 0;
  int max_ctas = 0;
  // NCCL_IB_QPS_PER_CONNECTION: the queue pairs each network connection takes its messages
  // over, in turn.
  int qps_per_connection = 1;
  // NCCL_BUFFSIZE (0: unset): Simple's buffer, whose steps are the ring's and the tree's
  // pieces (nccl_simple_buffer_bytes).
  std::int64_t buffsize = 0;
  int nvlinks_per_gpu = 0;  // NVLinks from a GPU into its switch layer (0: none)
  NcclP2pKernel p2p;        // NCCL's p2p kernel on these GPUs (AllToAll), from the topology
};

struct TunerEstimate {
  std::string algorithm;
  NcclProtocol protocol = NcclProtocol::kNone;
  double time_us = 0;
};

struct TunerChoice {
  std::string algorithm;
  NcclProtocol protocol = NcclProtocol::kNone;
  std::vector<TunerEstimate> estimates;  // every candidate that does the operation here
  // NCCL's own prediction for the chosen pair, and the latency it charges (protocols on;
  // -1 and 0 otherwise).
  double nccl_time_us = -1;
  double nccl_latency_us = 0;
  int nccl_channels = 0;  // the chosen algorithm's channels in NCCL's graph (0: no NCCL model)
  // The chosen pair's base and per-step latencies in NCCL's model (protocols on).
  NcclStepLatency nccl_steps;
  // What one of its channels moves per second in NCCL's model (payload, GB/s).
  double nccl_channel_GBps = 0;
  // Bytes the network moves per payload byte under the chosen protocol: its flags (LL 2,
  // LL128 128/120), or, where NCCL's model gives the protocol less of Simple's bandwidth
  // than that (LL's cap, LL128's per-channel cap: what the GPU's threads sustain), that
  // share, so a run pays the protocol's GPU-side rate too.
  double wire_factor = 1.0;
  // AllToAll under NCCL's model: NCCL's point-to-point plan for each peer's bytes.
  std::optional<NcclP2pPlan> p2p;
};

// What NCCL's pipeline needs to cut `bytes` into pieces, where the choice runs it (an
// algorithm with nccl_pipeline under an NCCL protocol); nullopt elsewhere. `channels`:
// those the run uses.
std::optional<NcclPipelineFacts> nccl_pipeline_facts(const TunerChoice& choice, CollectiveOp op, std::int64_t bytes,
                                                     int channels, const TunerFacts& facts);

// Simple's buffer for these facts' release, host and NCCL_BUFFSIZE (nccl_simple_buffer_bytes).
std::int64_t nccl_simple_buffer_bytes(const TunerFacts& facts);

// The piece NCCL cuts `bytes` into for the choice: the ring's and the tree's slices
// (nccl_piece_bytes), NVLS's and NVLS-tree's chunks (nccl_nvls_chunk_bytes); 0 under
// protocol none or for an algorithm NCCL's pipeline does not cut. `channels`: those the
// run uses.
std::int64_t nccl_chunk_bytes(const TunerChoice& choice, CollectiveOp op, std::int64_t bytes, int channels, const TunerFacts& facts);

// What NCCL's tuner sees of this topology (graphs from NCCL's search, reduced).
NcclSystem nccl_system(const TunerFacts& facts);

// The channels a ring or tree of `graph` runs on here, and what each moves of the search's
// per-channel speed. NCCL runs its communicator's (nccl_comm_channels): the search's
// doubled, each copy a thread block of its own over the same GPUs and NICs, sharing the
// search channel's speed. Without NCCL_MIN_CTAS or NCCL_MAX_CTAS a run takes the search's
// channels at the search's speed instead: the same bus bandwidth over the same NICs in half
// the streams. Where they move the communicator's count, that count: fewer thread blocks
// each at its default share (the bus bandwidth less the missing ones'), more of them
// sharing NCCL's bus bandwidth.
struct NcclRunChannels {
  int channels = 0;
  double speed_factor = 1.0;  // of the graph's per-channel speed
};
// `system`: nccl_system(facts).
NcclRunChannels nccl_run_channels(const TunerFacts& facts, const NcclSystem& system, const NcclGraph& graph);

// `algorithm`: "auto" or a fixed one (then only its protocol is chosen); `protocol`:
// "none" (the network alone), "auto", or "simple" / "ll" / "ll128".
TunerChoice choose_algorithm(CollectiveOp op, std::int64_t bytes, const TunerFacts& facts,
                             const std::string& algorithm = "auto", const std::string& protocol = "none");

}  // namespace fabricsim
