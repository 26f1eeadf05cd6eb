#pragma once
// NCCL's protocols as its cost model states them (src/graph/tuning.cc in NVIDIA/nccl;
// "Demystifying NCCL", arXiv 2507.04786, describes the same pipeline):
//   Simple: data in large slices, one flag per slice; highest bandwidth, highest latency.
//   LL:     8 bytes of data with an 8-byte flag in each 16-byte store: half the wire bytes
//           are flags, latency lowest.
//   LL128:  120 bytes of data with an 8-byte flag in each 128-byte line.
// fabricsim moves the protocol's bytes as NCCL's model charges them through the packet
// network (LL: 4x, its flags doubling the bytes and NCCL's model halving its rate again;
// LL128: 128/120) and adds NCCL's fixed latency for the collective (base + per step, by
// link kind, less what the simulated links charge themselves) at its start; `none` is the
// network alone, as before protocols were modelled.
#include <cstdint>
#include <optional>
#include <string_view>

#include "workloads/collective.h"

namespace fabricsim {

enum class NcclProtocol : std::uint8_t { kNone, kSimple, kLL, kLL128 };

const char* protocol_name(NcclProtocol p);  // "-", "Simple", "LL", "LL128"
// "none", "simple", "ll", "ll128" (any case); nullopt for others.
std::optional<NcclProtocol> protocol_from_name(std::string_view name);

// Bytes moved per payload byte: 1, 4 (LL: 2 on the wire, and NCCL's model gives LL a
// quarter of Simple's bandwidth), 128/120 (LL128).
double protocol_wire_factor(NcclProtocol p);

// NCCL's latency for a ring collective in microseconds: base + (steps inside nodes) x
// the intra-node hardware latency + (steps between nodes) x the network's. `nvlink`:
// GPUs inside a node talk over NVLink (else PCIe).
double nccl_ring_latency_us(NcclProtocol p, CollectiveOp op, int ranks, int nodes, bool nvlink);

// The ring's bus bandwidth under protocol `p` given the Simple figure: LL a quarter (a
// third for single-node gathers and broadcasts), LL128 92% up to 16.7 GB/s per channel
// for AllReduce (per-collective caps in NCCL's table).
double nccl_ring_busbw_GBps(NcclProtocol p, double simple_busbw_GBps, CollectiveOp op, int nodes, int channels);

// NCCL's tree (AllReduce across nodes), from the Hopper-era figures of the same table:
// latency base + 2 x ((GPUs per node - 1) x intra-node + log2(nodes) x network), in us.
double nccl_tree_latency_us(NcclProtocol p, int ranks, int nodes, bool nvlink);
// Its bus bandwidth from the link figure `base_GBps` (NVLink on two nodes or fewer, else
// the slower of NVLink and the NICs, as NCCL takes intra- or inter-node speed): 92% up to
// a per-channel cap by node count (38.7 / 41.4 / 36.0 GB/s for 1 / 2 / more nodes); LL
// 1/3.8 up to 87.7 / 22.5 / 19.0 GB/s; LL128 120/128 (7/9 on one node) up to 36.7 / 36.7
// / 29.0 GB/s per channel. The algorithm bandwidth is half of it.
double nccl_tree_busbw_GBps(NcclProtocol p, double base_GBps, int nodes, int channels);
// NCCL's correction of the tree's bandwidth for medium sizes (by log2(bytes / 64)).
double nccl_tree_correction(NcclProtocol p, std::int64_t bytes);
// NCCL's latency for CollNet Direct (Simple): 2 x (one NVLink hop of 8 us + 0.5 us per
// further GPU of the node) + the network's 10.7 us.
double nccl_collnet_latency_us(int gpus_per_node);
// floor(log2(n)) for n >= 1 (NCCL's log2i): a tree's depth over n nodes.
int floor_log2(int n);

}  // namespace fabricsim
