#pragma once
// Replays a training trace over the packet network (or an ideal one, where
// communication takes no time). Rank r runs on endpoint rank_hosts[r]. Each rank has a
// compute stream that runs its compute operations in trace order, one at a time;
// communication starts once its dependencies are done (a collective once every member
// has reached it) and overlaps compute.
#include <atomic>
#include <deque>
#include <mutex>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "workloads/workload_driver.h"
#include "sim/core/hash_mix.h"
#include "sim/network.h"
#include "sim/parallel/process_group.h"
#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/collective_executor.h"
#include "workloads/collectives/coupled_ring.h"
#include "workloads/collectives/nccl_costs.h"
#include "workloads/traces/replay_program.h"
#include "workloads/traces/trace.h"

namespace fabricsim {

// Flow fidelity: which ring collectives run as one flow per channel over all their
// edges (workloads/collectives/coupled_ring.h) instead of one flow per send.
enum class CoupledRings : std::uint8_t {
  kNone,
  kInNode,  // rings inside one NVSwitch domain (TP groups), their channels bundled
  kEvery,   // every ring (AllReduce, AllGather, ReduceScatter, no pipelining pieces)
};

// What the tuner decided for one collective.
struct CollectiveTuning {
  std::string algorithm;
  int channels = 0;              // 0: the options' params.channels
  std::int64_t chunk_bytes = 0;  // NCCL's pipeline's piece (0: the options')
  int p2p_channels = 0;          // AllToAll: NCCL's p2p channels (AlgorithmParams::p2p_channels)
  NcclCosts costs;               // none: the network alone
};

struct ReplayOptions {
  bool ideal_network = false;
  std::string default_algorithm = "ring";
  // How each collective runs, from its operation, its algorithm (`auto` or a named one),
  // size and members' endpoints: the app's tuner, NCCL's model where the fabric has GPUs
  // (as `collective` runs it). Unset: the algorithm as named (`auto`: the ring), no costs.
  std::function<CollectiveTuning(CollectiveOp, const std::string&, std::int64_t, const std::vector<HostId>&)> tune;
  std::int64_t nvls_latency_ps = 0;  // NVLS algorithms start after it
  // Per endpoint, its node (NCCL's step latencies differ inside a node and across);
  // empty: every endpoint on one node.
  std::vector<std::uint32_t> host_node;
  std::string model;  // which model tunes the collectives, for results
  AlgorithmParams params;
  // Per rank, how many times as long its compute takes (stragglers); empty: all 1.
  std::vector<double> compute_scale;
  // Per endpoint, its unit (topologies/partition.h node_units): a collective whose members
  // share one starts when its last member arrives, others one notice later. Empty: every
  // endpoint a unit of its own.
  std::vector<std::uint32_t> host_unit;
  CollectiveOptions collective;  // check_data off by default for replays
  CoupledRings coupled_rings = CoupledRings::kNone;
  // The trace is the generator's own (workloads/traces/transformer_trace.h, whose output the
  // tests check): check_trace is skipped, a few seconds at 16,384 GPUs.
  bool generated = false;
  ReplayOptions() { collective.check_data = false; }
};

// Where one rank's time went. Communication time is the union of its in-flight
// communication; exposed is the part of that during which its compute stream was idle.
struct RankBreakdown {
  Time finish = 0;
  Time compute = 0;
  Time communication = 0;
  Time exposed = 0;
  std::map<std::string, Time> communication_by_label;
  std::map<std::string, Time> exposed_by_label;
};

class TraceReplay final : public WorkloadDriver {
 public:
  // Throws std::invalid_argument when check_trace finds a problem.
  TraceReplay(Network& network, Trace trace, std::vector<HostId> rank_hosts, ReplayOptions options);
  // A trace whose operations went into its program as it was made (every rank's; its
  // maker's own, so not checked again).
  TraceReplay(Network& network, PreparedTrace prepared, std::vector<HostId> rank_hosts, ReplayOptions options);
  TraceReplay(const TraceReplay&) = delete;
  TraceReplay& operator=(const TraceReplay&) = delete;

  // Every rank starts at `at` (a time not yet run), from an event of its own on its
  // endpoint's partition.
  void start_at(Time at);
  void start(Time at, bool /*split*/) override { start_at(at); }
  // A run split over threads calls this between windows, every partition stopped: it
  // launches the collectives across units whose last member arrived in the window (each
  // starts one notice after that arrival, as in a serial run) and frees finished ones.
  // Over MPI processes (`group`) every process calls it after every window: the
  // arrivals at collectives across units are pooled first.
  void between_windows(ProcessGroup* group = nullptr) override;
  // Over MPI processes, after the run: every process adopts the ranks the others ran
  // (`owner`: the process that ran a rank), so the results are whole everywhere.
  void pool(ProcessGroup& group, const std::function<int(int rank)>& owner);
  bool done() const override;
  Time started_at() const { return started_; }
  Time iteration_time() const;
  const std::vector<RankBreakdown>& breakdown() const;
  // How many different dependency shapes its ranks have: each is kept once, for every
  // rank with it (data-parallel replicas share theirs).
  std::size_t distinct_child_lists() const { return program_.child_lists.size(); }
  // How many different programs they run (ranks differing only in their collectives'
  // groups and keys, and their sends' and receives' peers and tags, run one).
  std::size_t distinct_programs() const { return program_.programs.size(); }
  // The trace's tables (groups and names; its keys' names are dropped once their order
  // keys are dealt). Its operations are the replay's own by now (programs shared by ranks,
  // each rank's own parts beside their states) and its dependency lists its children: the
  // trace's own lists of both are dropped as they are taken (at 100,000 GPUs, 80 million
  // operations' worth).
  const Trace& trace() const { return trace_; }
  std::size_t operation_count() const;
  std::size_t operation_count(int rank) const { return program_.slots[static_cast<std::size_t>(rank)].size(); }
  const std::string& model_description() const { return options_.model; }
  HostId host_of(int rank) const { return hosts_[static_cast<std::size_t>(rank)]; }
  // Told of each rank's operations as they finish (and of its collectives' steps when it
  // wants them); set before start().
  void set_activity_listener(ActivityListener* listener) override {
    activity_ = listener;
    options_.collective.activity = listener != nullptr && listener->wants_trace_steps() ? listener : nullptr;
  }


 private:
  void check_algorithms() const;  // throws std::invalid_argument naming the operation
  std::vector<RankBreakdown> work_out_breakdown() const;
  mutable std::vector<RankBreakdown> breakdown_;
  mutable bool breakdown_kept_ = false;
  using OpState = ReplayProgram::OpState;
  using OpSlot = ReplayProgram::OpSlot;
  static constexpr std::int32_t kReady = ReplayProgram::kReady;
  OpSlot& slot(int rank, int op) { return program_.slots[static_cast<std::size_t>(rank)][static_cast<std::size_t>(op)]; }
  const OpSlot& slot(int rank, int op) const { return program_.slots[static_cast<std::size_t>(rank)][static_cast<std::size_t>(op)]; }
  std::span<const int> children(int rank, int op) const { return program_.children(rank, op); }
  // A rank's compute stream, and what else of the rank each of its operations' ends
  // touches: its clock (its endpoint's partition), what is left of its operations and
  // when its last one ended. One cache line, which the event queue has just touched when
  // a compute op ends (at 100,000 ranks a line elsewhere per rank is a miss per op).
  struct alignas(64) ComputeStream final : EventHandler {
    TraceReplay* owner = nullptr;
    Simulator* sim = nullptr;
    Time finished = -1;
    int rank = 0;
    std::uint32_t next = 0;  // where its next compute op is, or an op before it (trace order)
    int running = -1;
    std::int32_t left = 0;
    void on_event() override;
    // Ranks in lock-step end compute ops at the same instant by the thousand: the event
    // loop asks ahead for what finishing the running op reads, in stages (its rank's
    // operations' array, then the op's line, then its children's lines).
    void prefetch() const override;
    void prefetch_next() const override;
    void prefetch_last() const override;
  };
  static_assert(sizeof(ComputeStream) == 64);
  // Each rank's start: makes ready the operations that wait for nothing.
  struct RankStart final : EventHandler {
    TraceReplay* owner = nullptr;
    int rank = 0;
    void on_event() override;
  };
  struct PendingCollective {
    std::vector<std::pair<int, int>> members;  // (rank, op index) ready so far
    Time arrived = -1;                         // the last of them so far
  };
  struct Arrival {
    Time at;
    int rank;
    int op;
  };
  void ready(int rank, int op);
  void try_compute(int rank);
  void finish(int rank, int op);
  void finish_members(const std::vector<std::pair<int, int>>& members);  // finish() each, in order
  void prefetch_children(int rank, int op) const;  // their states and operations, for finish()
  void report(int rank, int op) const;  // to activity_
  // Builds the collective whose members have all arrived (under mutex_, or between
  // windows); the caller starts it: at once inside one unit, one notice later across units.
  struct Launched {  // an executor, or at flow fidelity a coupled ring
    CollectiveExecutor* executor = nullptr;
    CoupledRing* ring = nullptr;
    void start(Time now) const;  // now, as NCCL's kernels do
    void start_at(Time at) const;
  };
  Launched launch_collective(PendingCollective pending);
  struct Tuned;
  // A coupled ring of a kind whose rings on the endpoints are known (`kind.ring_on_hosts`,
  // set by the kind's first launch); `by_position`: the members' (rank, op) in group order.
  Launched launch_ring(Tuned& kind, std::vector<std::pair<int, int>> by_position, std::uint32_t key);
  bool one_unit(const std::vector<int>& group) const;  // all on one partition for any split
  // Finished collectives hold their programs until the next compute event frees them.
  void reap_collectives();
  // What each rank hears from its own NIC: its sends leaving, and data for its receives
  // arriving (matched to them in order per sender and tag, which travel with the message).
  class RankAgent final : public MessageObserver {
   public:
    TraceReplay* owner = nullptr;
    int rank = 0;
    std::map<MessageId, int> sends;  // my send ops in flight
    // Per (sender rank, tag): data arrived (when its send started, when it arrived), and
    // my receives ready for it, each in order from `*_taken` on. Mostly one of either, so
    // plain vectors (a std::deque takes 576 bytes for one; a 100,000-GPU step holds
    // about a million of these at once).
    struct FromPeer {
      std::vector<std::pair<Time, Time>> data;
      std::vector<int> recvs;
      std::uint32_t data_taken = 0;
      std::uint32_t recvs_taken = 0;
      bool idle() const { return data_taken == data.size() && recvs_taken == recvs.size(); }
    };
    std::map<std::pair<int, int>, FromPeer> from_peer;
    int matching = 0;  // match() calls on the stack

    void match(const std::pair<int, int>& from);
    void on_message_sent(MessageId id, Time now) override;
    void on_message_delivered(MessageId id, Time now) override;
    void on_message_finished(MessageId, Time) override {}
    std::uint32_t observer_key() const override { return owner->ranks_[static_cast<std::size_t>(rank)].order(); }
  };

  Network* network_;
  Trace trace_;
  std::vector<HostId> hosts_;
  ReplayOptions options_;
  // Per rank, its operations (taken out of the trace): their states, programs and children.
  ReplayProgram program_;
  std::deque<ComputeStream> streams_;
  std::deque<RankStart> ranks_;
  std::unordered_map<std::uint32_t, PendingCollective> collectives_;  // by key
  // A split run: shared things (collectives_, executors_, the caches below, the network's
  // multicast groups) are touched under this lock; arrivals at collectives across units
  // wait in arrivals_ for between_windows().
  std::mutex mutex_;
  bool split_ = false;
  std::vector<Arrival> arrivals_;  // at collectives across units, since the last window
  Time notice_ = 0;  // the fabric's longest link latency
  // Per collective (trace key): the first of its 2 x members order keys, taken in the
  // order of its lowest member's op before the run.
  std::vector<std::uint32_t> first_key_;
  std::vector<std::unique_ptr<CollectiveExecutor>> executors_;  // running ones (and just-finished)
  std::vector<std::unique_ptr<CoupledRing>> rings_;             // likewise
  // (algorithm, op, ranks, bytes, channels, chunk, root, local size, start latency, costs)
  using PreparedKey = std::tuple<std::string, int, int, std::int64_t, int, std::int64_t, int, int, std::int64_t, NcclCosts, bool, int>;
  std::map<PreparedKey, std::shared_ptr<const PreparedCollective>> prepared_;
  // Coupled rings by (op, ranks, bytes, channels, chunk, local size), in the collective's
  // ranks, with equal channels folded into one ring (CoupledRing::fold_equal).
  struct RingShape {
    std::vector<CoupledRing::Ring> rings;
    std::uint16_t shares = 1;  // the channels each ring stands for
  };
  std::map<std::tuple<int, int, std::int64_t, int, std::int64_t, int>, RingShape> ring_shapes_;
  std::unordered_map<std::uint32_t, bool> one_domain_;  // trace group -> all on one NVSwitch domain
  // The tuner's decision per (trace group, op, bytes, algorithm's name index), and for
  // coupled rings their costs on the ring's edges.
  struct Tuned {
    CollectiveTuning tuning;
    std::optional<CoupledRing::Costs> ring_costs;
    // Once one ran as a coupled ring, every later one does, over the same endpoints:
    // its rings on them, the channels each stands for, and the network's routes.
    std::shared_ptr<const std::vector<CoupledRing::Ring>> ring_on_hosts;
    std::uint16_t ring_shares = 1;
    Network::KnownRingRoutes ring_routes;
  };
  // Hashed: a 100,000-GPU step has a tensor-parallel group per node, so a tree of them is
  // a dozen cache misses per collective launched.
  struct TunedKey {
    std::uint32_t group;
    int op;
    std::int64_t bytes;
    std::uint16_t algorithm;
    bool operator==(const TunedKey&) const = default;
  };
  struct TunedKeyHash {
    std::size_t operator()(const TunedKey& k) const {
      const std::uint64_t h = hash_mix((std::uint64_t{k.group} << 32) | (static_cast<std::uint64_t>(k.op) << 16) | k.algorithm,
                                       static_cast<std::uint64_t>(k.bytes));
      return hash_finish(h);
    }
  };
  std::unordered_map<TunedKey, Tuned, TunedKeyHash> tuned_;
  std::atomic<std::size_t> finished_collectives_{0};
  std::deque<RankAgent> agents_;      // observers never move
  std::vector<int> rank_of_host_;  // by host id; -1: no rank there
  ActivityListener* activity_ = nullptr;
  Time started_ = -1;
};

}  // namespace fabricsim
