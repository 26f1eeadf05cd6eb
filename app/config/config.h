#pragma once
// A scenario as validated plain structs: everything a run needs, with units resolved
// and ranges checked. Produced by load_config(); nothing here knows about YAML.
#include <any>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <memory>

#include "sim/endpoint/congestion_control.h"
#include "sim/endpoint/nic_config.h"
#include "sim/net/ecn_marker.h"
#include "sim/net/shared_buffer_mmu.h"
#include "sim/net/switch.h"
#include "sim/core/time.h"
#include "topologies/cluster.h"
#include "topologies/faults.h"
#include "workloads/collectives/collective.h"
#include "workloads/collectives/nccl_tuning.h"

namespace fabricsim {

class ProcessGroup;  // sim/parallel/process_group.h


// Where a value came from, preformatted ("file.yaml:12:7" or "--set a.b=c"), so that
// checks made after loading (names against the built topology) can point at it.
struct SourceRef {
  std::string where;
  std::string path;  // key path, e.g. "messages[3].dst"
};

struct CustomLinkConfig {
  std::string a;
  std::string b;
  LinkSpec link;
};

struct CustomTopologyConfig {
  std::vector<std::string> hosts;
  std::vector<std::string> switches;
  std::vector<CustomLinkConfig> links;
};

struct TopologyConfig {
  enum class Kind { kLeafSpine, kFatTree, kRailOptimized, kTorus3d, kNvSwitch, kCluster, kCustom };
  Kind kind = Kind::kLeafSpine;
  LeafSpineSpec leaf_spine;
  FatTreeSpec fat_tree;
  RailOptimizedSpec rail_optimized;
  Torus3dSpec torus3d;
  NvSwitchSpec nvswitch;
  ClusterSpec cluster;
  CustomTopologyConfig custom;
  SourceRef source;
  SourceRef nic_model_source;  // cluster.nic_model, where given
};

// A collective (workloads/collectives/collective.h): one size, or a sweep of sizes run back to back.
struct CollectiveConfig {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::string algorithm = "ring";   // a built-in algorithm, "auto", or "msccl" / "steps" with `file`
  std::string protocol = "auto";    // NCCL's: auto (NCCL's choice), simple, ll, ll128, or none (the ideal network)
  bool protocol_given = false;      // written in the config (the collective command keeps it)
  std::string file;                 // MSCCL XML or our YAML steps, resolved against the config's folder
  SourceRef file_source;
  std::vector<std::int64_t> sizes;  // bytes, nccl-tests meaning (build_collective)
  int ranks = 0;                    // 0: every endpoint, in order
  int channels = 0;                 // 0: as NCCL sets them (its graph's; 1 with `protocol: none`)
  std::int64_t chunk_bytes = 0;
  int root = 0;
  int local_size = 0;               // hierarchical; 0: GPUs per node of a cluster, else all ranks
  double reduce_bytes_per_second = 0;  // GPU profile: 0 makes reductions free
  bool check_data = true;
};

// A training trace replay (docs/traces.md).
// A rank whose compute takes `compute` times as long (a slow or throttled GPU).
// Or, with `fraction`, that fraction of the ranks drawn with `seed`, each slowed by a
// factor drawn uniformly from [compute, compute_max].
struct StragglerConfig {
  int rank = 0;
  double compute = 1.0;
  double fraction = 0;  // > 0: drawn ranks instead of `rank`
  double compute_max = 0;  // > compute: a uniform draw per rank
  std::uint64_t seed = 1;
  SourceRef source;
};

struct TraceWorkloadConfig {
  bool chakra = false;       // MLCommons Chakra files PREFIX.RANK.et instead of our JSON Lines
  int chakra_ranks = 0;
  // Chakra `pg_name` -> member ranks, in collective rank order (collectives without a
  // pg_name, or with one not listed, span every rank).
  std::map<std::string, std::vector<int>> process_groups;
  std::string file;          // our trace, or the Chakra prefix; resolved against the config's folder
  SourceRef file_source;
  // Or a step generated before the run (`generate:`, as `fabricsim workload gen` does):
  // model and GPU files, resolved against the config's folder when it is loaded.
  bool generate = false;
  std::string model_file, gpu_file;
  SourceRef model_source, gpu_source;
  int tp = 1, pp = 1, dp = 1, ep = 1, microbatches = 1;
  std::int64_t bucket_bytes = 25 * 1024 * 1024;
  bool zero = false;
  bool recompute = false;      // full activation recomputation (ParallelSpec::recompute)
  bool overlap_dp = true;      // gradients reduced during the backward (ParallelSpec::overlap_dp)
  bool ideal_network = false;  // communication takes no time
  std::string algorithm = "ring";
  std::string protocol = "auto";  // as CollectiveConfig::protocol, per collective
  int channels = 0;               // 0: as NCCL sets them (1 without NCCL's model)
  std::vector<StragglerConfig> stragglers;
};

struct WorkloadConfig {
  // The kind as `workload.kind` names it (app/workload/workload_kinds.cpp lists them);
  // empty: no workload section.
  std::string kind;
  bool is(const char* name) const { return kind == name; }
  // Collectives and traces: rank r runs on endpoint placement[r] (empty: rank r on
  // endpoint r).
  std::vector<std::string> placement;
  std::vector<SourceRef> placement_sources;
  Time start = 0;
  int traffic_class = 0;
  CollectiveConfig collective;  // collective, and every job
  TraceWorkloadConfig trace;    // trace and chakra
  // What only its kind reads, in a struct of the kind's own, read and used in its file in
  // app/workload/ (a synthetic pattern's bytes, an incast's receiver, ...).
  std::any settings;
};

// The lossless-fabric settings (docs/lossless.md). A section given in the config is on
// unless it says `enabled: false`.
struct LosslessConfig {
  bool shared_buffer = false;
  BufferConfig buffer;
  std::uint8_t pfc_classes_mask = 0;
  EcnConfig ecn;
  std::vector<EcnForSpeed> ecn_by_speed;
  std::shared_ptr<const CongestionControl> congestion_control;  // null: rate-less (PFC alone)
  bool dateline = false;
  Time deadlock_check_interval = us(100);  // 0: no detection
  Time queue_sample_interval = 0;          // 0: no sampling

  bool operator==(const LosslessConfig&) const = default;
};

struct NetworkConfig {
  // The endpoints' transport settings, read into the NIC's own struct: its defaults are
  // the only ones. (Those that follow from the topology or the lossless section, such as
  // nack_on_gap and the congestion control, are set when the network is built.)
  NicConfig nic;
  int traffic_classes = 1;
  std::int64_t queue_capacity = 16 * 1024 * 1024;
  LoadBalancing load_balancing = LoadBalancing::kEcmp;
  LosslessConfig lossless;
  // packet: every packet through queues and links; flow: each message a flow sharing
  // link capacity max-min fairly (sim/flow/flow_model.h), no queues.
  enum class Fidelity : std::uint8_t { kPacket, kFlow };
  Fidelity fidelity = Fidelity::kPacket;
  // Flow fidelity: solve rates at most once per this interval (0: at every change, exact).
  Time flow_rate_interval = 0;
  // Flow fidelity, trace replay: which ring collectives run as one flow per channel over
  // all their edges (workloads/collectives/coupled_ring.h) instead of a flow per send: none
  // (`steps`), those inside one node's NVSwitch domain (`in_node`), every one (`coupled`).
  enum class FlowRings : std::uint8_t { kSteps, kInNode, kCoupled };
  FlowRings flow_rings = FlowRings::kCoupled;
  // Whose tuning rules NCCL's model follows (workloads/collectives/nccl_tuning.h): a release line.
  std::string nccl_version = kDefaultNcclVersion;
  // NCCL's LL cap across nodes, its per-step proxy overhead and (2.29 on) NVLS-tree's size
  // correction depend on the host CPU.
  NcclCpu cpu = NcclCpu::kIntel;
  // NCCL_MIN_CTAS / NCCL_MAX_CTAS (0: unset), NCCL_IB_QPS_PER_CONNECTION and NCCL_BUFFSIZE
  // (0: unset, NCCL's own default), as NCCL reads them.
  int nccl_min_ctas = 0;
  int nccl_max_ctas = 0;
  int nccl_qps_per_connection = 1;
  std::int64_t nccl_buffsize = 0;

  bool operator==(const NetworkConfig&) const = default;
};

struct MessageConfig {
  std::string src;
  std::string dst;
  std::int64_t bytes = 0;
  Time start = 0;
  int traffic_class = 0;
  SourceRef src_source;
  SourceRef dst_source;
};

struct StopConfig {
  Time time = kTimeMax;
  std::uint64_t events = UINT64_MAX;
  // The progress watchdog (0: off): events at one simulated time, and events without a
  // delivered byte while started messages wait, before the run is stopped as stuck.
  std::uint64_t frozen_events = 16'000'000;
  std::uint64_t undelivered_events = 200'000'000;
};

struct FaultConfig {
  FaultSpec spec;
  SourceRef source;
};

// One of several jobs sharing the fabric: its workload on `ranks` endpoints, placed by
// `placement` among those the jobs before it left free.
struct JobConfig {
  std::string name;
  int ranks = 0;
  enum class Placement { kPacked, kSpread, kRandom, kList };
  Placement placement = Placement::kPacked;
  std::vector<std::string> hosts;  // kList
  std::uint64_t seed = 1;          // kRandom
  WorkloadConfig workload;
  SourceRef source;
};

// A what-if scenario (`fabricsim whatif`): the config with these faults added, and these
// stragglers instead of the trace workload's.
struct WhatIfConfig {
  std::string name;
  std::vector<FaultConfig> faults;
  std::vector<StragglerConfig> stragglers;
  SourceRef source;
};

struct ScenarioConfig {
  std::string name;
  std::string file;  // where it was loaded from, for reports
  // The config as run, after --set (YAML), its --set overrides, and a hash of it that
  // tells variants apart (results.json records all three).
  std::string effective;
  std::vector<std::string> overrides;
  std::uint64_t hash = 0;
  std::uint64_t seed = 1;
  TopologyConfig topology;
  NetworkConfig network;
  std::vector<MessageConfig> messages;
  WorkloadConfig workload;
  std::vector<FaultConfig> faults;  // what-if changes to the fabric, from the start
  std::vector<JobConfig> jobs;      // several jobs on one fabric (instead of `workload`)
  std::vector<WhatIfConfig> whatif; // scenarios `fabricsim whatif` compares with this config
  StopConfig stop;
  // Refuse runs estimated to need more (bytes); 0: the memory this machine has free.
  // Set by --memory-limit, not by the config file: it is the machine's, not the scenario's.
  std::uint64_t memory_limit = 0;
  // Split the run over this many partitions, one thread each (--threads); 0: one queue.
  // Like the memory limit, the machine's choice, not the scenario's.
  int threads = 0;
  // Partitions for those threads (several per thread); 0: one per thread.
  int partitions = 0;
  // The processes mpirun started for this run (not owned; null: one process). Each
  // builds the whole fabric and runs its block of the partitions.
  ProcessGroup* processes = nullptr;
};

}  // namespace fabricsim
