#pragma once
// NCCL's own cost model, as its tuner evaluates it before every collective
// (src/graph/tuning.cc in NVIDIA/nccl: ncclTopoTuneModel and ncclTopoGetAlgoTime).
// For each algorithm and protocol NCCL keeps a latency (us) and an algorithm bandwidth
// (GB/s) computed from its topology graphs, and predicts time = latency + bytes / bw;
// with NCCL_ALGO / NCCL_PROTO unset it runs the pair of least predicted time.
// The figures changed between releases: `NcclRules` holds one release line's tables,
// chosen by version ("2.18" to "2.30"; docs/model.md lists what each covers).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/collectives/collective.h"
#include "workloads/collectives/nccl_protocol.h"

namespace fabricsim {

// NCCL's algorithms that fabricsim runs, in NCCL's index order (PAT and CollNet Chain
// are not modelled).
enum class NcclAlgo : std::uint8_t { kTree, kRing, kCollNetDirect, kNvls, kNvlsTree };
inline constexpr int kNcclAlgos = 5;
inline constexpr int kNcclProtos = 3;  // LL, LL128, Simple (NCCL's order)

int nccl_proto_index(NcclProtocol p);     // -1 for kNone

// The hosts' CPU as NCCL's tuner reads it (comm->cpuVendor, cpuArch): Intel and Arm hosts
// share LL's caps and the 1 us proxy overhead, AMD's are its own; Arm (Grace) is not x86.
enum class NcclCpu : std::uint8_t { kIntel, kAmd, kArm };

// The speed lists NCCL's graph search takes for Blackwell GPUs (src/graph/search.cc's sm100
// arrays), by the release that brought them: none before 2.25 (Blackwell is searched with
// Hopper's), then 2.25, 2.27, 2.27.5, 2.27.6, 2.29, 2.29.7 and 2.30 changed them.
enum class NcclBlackwellLists : std::uint8_t { kNone, k2_25, k2_27, k2_27_5, k2_27_6, k2_29, k2_29_7, k2_30 };

// One NCCL release line's tuning constants and rules.
struct NcclRules {
  std::string version;
  // [algo][proto] base latency; [hw: NVLink, PCIe, network][algo][proto] per-hop latency (us).
  std::array<std::array<double, kNcclProtos>, kNcclAlgos> base{};
  std::array<std::array<std::array<double, kNcclProtos>, kNcclAlgos>, 3> hw{};
  // [generation: Volta, Ampere, Hopper, Blackwell][nodes: 1, 2, more]. llMaxBws' first
  // index is the GPU generation on one node and the CPU (0 Intel, 1 AMD) across nodes.
  std::array<std::array<double, 3>, 4> ll_max_bw{};
  std::array<std::array<double, 3>, 4> ring_ll128_per_channel{};
  std::array<std::array<double, 3>, 4> tree_ll128_per_channel{};
  std::array<std::array<double, 3>, 4> tree_per_channel{};
  std::array<std::array<double, 3>, 4> nvls_tree_per_channel{};  // 0: no cap (before 2.28)
  std::array<double, 4> nvls_efficiency{};                       // 0: the older NVLS formula
  bool ring_inter_steps_per_node_pair = true;  // 2(nodes-1) network steps (2.23+), else 2 x nodes
  bool tree_net_latency_at_one_gpu_per_node = false;  // ppn = 1 takes the tree's network latency (2.23+)
  // Through 2.20: the ring's LL at a quarter of its bus bandwidth (a third for one-node
  // gathers); from 2.21, half.
  bool ring_ll_quarter = false;
  // The ring's LL128 with one GPU per node (the same GPU sends and receives through the
  // NIC): 0.7 of the bus bandwidth through 2.22, then 0.92 as with more GPUs.
  double ring_ll128_one_gpu_share = 0.92;
  // 2.18: NVLS's older latency and bandwidth rules, and gathers and scatters on the ring only.
  bool rules_2_18 = false;
  double collnet_arity_us = 0.4;  // CollNet Direct's per-GPU serialization (0.5 in 2.18)
  // Blackwell's own graph search (2.25 on; from 2.27 NVLS's 24 channels in one NVLink
  // domain): its speed lists and NVLS channel counts, where older lines search it as Hopper.
  NcclBlackwellLists blackwell_lists = NcclBlackwellLists::kNone;
  // NVLS's kernel channels on Blackwell inside one NVLink domain (src/transport/nvls.cc):
  // 24 from 2.27, 32 in 2.25 and 2.26 (their one Blackwell figure).
  int nvls_blackwell_domain_channels = 24;
  // 2.29 on: NVLS-tree's bandwidth takes the tree's size correction on Blackwell with x86 hosts.
  bool nvls_tree_size_correction_blackwell_x86 = false;
  // Where NCCL turns LL128 on unasked (NCCL_PROTO unset): through 2.24 compute capabilities
  // 7.0, 8.0 and 9.0 only; 2.25 and 2.26 also 10.0 and 12.0; from 2.27 every one from 7.0.
  enum class Ll128Default : std::uint8_t { kVoltaAmpereHopper, kListedBlackwell, kAll };
  Ll128Default ll128_default = Ll128Default::kAll;
  bool ll128_by_default(int compute_capability) const;
  // The communicator's channels (ncclTopoPostset, src/graph/connect.cc): at most
  // MAXCHANNELS, 32 before 2.25 and 64 from 2.25; across nodes, a ring faster than 45 GB/s
  // a channel doubles its channels once more on Hopper: 2.18 and 2.19 while that stays
  // within MAXCHANNELS, 2.20 to 2.24 below 16 channels, 2.25 on the same from Hopper up.
  int max_channels = 64;
  enum class FastRingDoubling : std::uint8_t { kWithinMax, kBelow16Hopper, kBelow16HopperOn };
  FastRingDoubling fast_ring_doubling = FastRingDoubling::kBelow16HopperOn;
};

// Simple's buffer (src/init.cc, computeBuffSizes): NCCL_BUFFSIZE where it is set (`asked`
// > 0); else 4 MiB, but 1 MiB on Arm hosts in 2.18 (DEFAULT_BUFFSIZE_ARM, gone from 2.19).
std::int64_t nccl_simple_buffer_bytes(const NcclRules& rules, NcclCpu cpu, std::int64_t asked);

// A release ("2.21", "2.21.5", "2.25.1-1") to its line's rules: 2.18; 2.19 and 2.20
// take 2.19's; 2.21 and 2.22 take 2.21's; 2.23 and 2.24 take 2.23's; 2.25 and 2.26 take
// 2.25's; 2.27, 2.28 and 2.29 their own, by patch release where one changed a figure (a line
// named without a patch takes its last release's); 2.30 and later 2.30's. nullopt before
// 2.18 or for what is not a version.
std::optional<NcclRules> nccl_rules(std::string_view version);
// The release's minor number ("2.28.7-1" -> 28); -1 for what is not a 2.x version.
int nccl_minor_version(std::string_view version);
const std::vector<std::string>& nccl_rule_versions();
inline constexpr const char* kDefaultNcclVersion = "2.28";  // 2.28.9's rules

// One of NCCL's topology graphs, as its search leaves it (per channel, GB/s).
struct NcclGraph {
  int channels = 0;
  double bw_intra = 0;
  double bw_inter = 0;
  double latency_inter = 0;  // us; NCCL sets it for some networks, 0 for InfiniBand and RoCE
  // The channels its kernels run on where that is not the search's count (0: `channels`):
  // NVLS's search makes a channel per head GPU, its kernels run NCCL_NVLS_NCHANNELS.
  int run_channels = 0;
  // Every channel the same ring (one node: the NVSwitch gives each the same order). NCCL
  // then costs Broadcast and Reduce one hop, not one per step.
  bool same_channels = false;
};

// What NCCL's tuner knows of the communicator.
struct NcclSystem {
  int ranks = 0;
  int nodes = 1;
  int compute_capability = 90;  // 70 Volta, 80 Ampere, 90 Hopper, 100 Blackwell
  NcclCpu cpu = NcclCpu::kIntel;  // LL's cap across nodes is the CPU's
  bool nvlink = true;           // GPUs of a node talk over NVLink (else PCIe)
  double net_overhead_us = 1.0; // NCCL_NET_OVERHEAD: 1 us on Intel, 2 on AMD
  std::array<NcclGraph, kNcclAlgos> graphs{};  // 0 channels: the algorithm is not available
  int comm_channels = 0;        // the communicator's channels (the ring plateau test); 0: the ring's
};

// One (algorithm, protocol) entry of NCCL's table: latency in us, algorithm bandwidth in
// GB/s (0: not available).
struct NcclCost {
  double latency_us = 0;
  double algbw_GBps = 0;
  double channel_GBps = 0;  // one channel's share of the bus bandwidth behind algbw
};

// What NCCL's latency is made of for the ring and the tree: a base (the kernel's launch
// and set-up) and one figure per step, for a step between GPUs of a node and for one
// through the network (the proxy, the RDMA write and its completion). NCCL multiplies
// them by its own count of steps; fabricsim charges them per step along the simulated
// dependency chain (docs/model.md, "NCCL's pipeline").
struct NcclStepLatency {
  double base_us = 0;
  double intra_us = 0;
  double inter_us = 0;
};

class NcclCostModel {
 public:
  NcclCostModel(const NcclRules& rules, const NcclSystem& system);
  // The table entry, before the per-size corrections.
  NcclCost cost(CollectiveOp op, NcclAlgo a, NcclProtocol p) const;
  // NCCL's predicted time for one operation of `bytes` (ncclTopoGetAlgoTime with one
  // operation in flight), or a negative value where the pair is not available.
  double time_us(CollectiveOp op, NcclAlgo a, NcclProtocol p, std::int64_t bytes) const;
  // The latency that time_us() charges for `bytes` (the ring's Simple plateau included).
  double latency_us(CollectiveOp op, NcclAlgo a, NcclProtocol p, std::int64_t bytes) const;
  // The per-step figures cost() builds the ring's and the tree's latency from.
  NcclStepLatency step_latency(NcclAlgo a, NcclProtocol p) const;
  const NcclRules& rules() const { return rules_; }
  const NcclSystem& system() const { return system_; }

 private:
  NcclRules rules_;
  NcclSystem system_;
};

// NCCL's topology search, reduced to what its tuner reads: given a GPU's NVLink
// bandwidth into its node's switches, one NIC's bandwidth, the NICs per node and the node
// count, the channel count and per-channel speeds NCCL's search and channel duplication
// settle on (speeds from its per-generation speed lists; docs/model.md).
NcclGraph nccl_ring_graph(int compute_capability, double nvlink_GBps, double nic_GBps, int nics_per_node, int nodes,
                          NcclBlackwellLists blackwell_lists = NcclBlackwellLists::kNone);
// NCCL's tree graph: the ring's search, then (its second pass, for trees on two nodes)
// the intra-node speed raised while the GPU's NVLinks carry it, up to twice the
// inter-node speed: a 2-node tree sends half as much over the network as inside a node.
NcclGraph nccl_tree_graph(int compute_capability, double nvlink_GBps, double nic_GBps, int nics_per_node, int nodes,
                          NcclBlackwellLists blackwell_lists = NcclBlackwellLists::kNone);
// NCCL's tree graph inside one node (a chain of its `gpus`): init.cc gives the tree's
// search the ring's channel count as its most, so duplication adds none, and each channel
// goes at the fastest listed speed the GPU's NVLinks carry over all of them; a tree of two
// GPUs at up to twice that. As NCCL 2.29.2 prints its tree entries for 2, 4 and 6 H100s
// (12 channels at 60, 30 and 30 GB/s under the cap of 38.7 per channel) and as its graph
// dumps show for two GPUs (the tree at twice the ring's speed).
NcclGraph nccl_one_node_tree_graph(int compute_capability, double nvlink_GBps, int ring_channels, int gpus,
                                   NcclBlackwellLists blackwell_lists = NcclBlackwellLists::kNone);
// NCCL's NVLS graph. On one node (NCCL 2.18.3 on: "pull evenly from all GPUs") its
// search makes a channel per GPU of the communicator (`gpus`), each GPU the head of one;
// a channel reads from every GPU's NVLinks once and from its head's twice, so its speed
// is the fastest listed s with (gpus + 1) x s within a GPU's NVLinks. Its second pass
// then raises the inter speed up the list while it is below twice that, and NCCL's model
// caps each channel by it; 2.18's search (`search_2_18`) has neither that pass for NVLS
// nor 50 GB/s in its Hopper list (the pass came in 2.20; the 2.19 line, which covers 2.20, gets it).
// Its kernels run 16 channels (NCCL_NVLS_NCHANNELS on Hopper). Across nodes: 16 channels
// at the fastest intra speed within the NVLinks, the inter one within the node's NICs.
NcclGraph nccl_nvls_graph(int compute_capability, double nvlink_GBps, double nic_GBps, int nics_per_node, int nodes,
                          int gpus, bool search_2_18, NcclBlackwellLists blackwell_lists = NcclBlackwellLists::kNone,
                          int blackwell_domain_channels = 24);
// The channels NCCL's NVLS kernels run (src/transport/nvls.cc): 16 on Hopper; on Blackwell
// (searched as Blackwell: 2.25 on) `blackwell_domain_channels` inside one
// NVLink domain and 32 across nodes.
int nccl_nvls_run_channels(int compute_capability, int nodes, NcclBlackwellLists blackwell_lists = NcclBlackwellLists::kNone,
                           int blackwell_domain_channels = 24);

// The channels NCCL's communicator has (ncclTopoPostset in src/graph/connect.cc), which its
// ring and tree kernels run on: the ring search's `ring.channels` doubled, within
// MAXCHANNELS; across nodes on Hopper (and later, by release) with the ring's intra speed
// above 45 GB/s, doubled again (NcclRules::fast_ring_doubling); then at most `max_ctas`
// and at least `min_ctas` (NCCL_MAX_CTAS and NCCL_MIN_CTAS, each within MAXCHANNELS, the
// least raised no higher than the most; 0: unset). 0 where the ring has no channels.
int nccl_comm_channels(const NcclRules& rules, const NcclGraph& ring, int compute_capability, int nodes, int min_ctas = 0,
                       int max_ctas = 0);

// floor(log2(n)) for n >= 1 (NCCL's log2i): a tree's depth over n nodes.
int floor_log2(int n);

}  // namespace fabricsim
