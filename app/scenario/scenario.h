#pragma once
// One scenario from validated config to finished run: topology -> compiled network ->
// messages and workload flows scheduled -> events run (with progress reports) -> state
// for the recorders.
#include <chrono>
#include <cstdint>
#include <functional>
#include <deque>
#include <memory>
#include <optional>

#include "app/scenario/progress_watchdog.h"
#include "app/scenario/fault_timeline.h"
#include "app/scenario/memory_estimate.h"
#include "app/output/message_log.h"
#include "app/config/config.h"
#include "app/config/config_error.h"
#include "sim/flow/flow_model.h"
#include "sim/flow/flow_routes.h"
#include "sim/network.h"
#include "sim/parallel/parallel_engine.h"
#include "sim/core/simulator.h"
#include "topologies/compile.h"
#include "topologies/routing.h"
#include "topologies/topology.h"
#include "app/workload/collective_sweep.h"
#include "app/workload/setup_note.h"
#include "app/workload/trace_ahead.h"
#include "app/workload/workload_kind.h"
#include "sim/net/deadlock_detector.h"
#include "workloads/traces/trace_replay.h"
#include "workloads/traffic/message_schedule.h"

namespace fabricsim {

// Builds the topology the config describes. Throws ConfigError for topologies that
// cannot work (an endpoint without links, a fabric too small), pointing at `topology`.
Topology build_topology(const TopologyConfig& config);

struct Progress {
  Time sim_time;
  std::uint64_t events;
  std::size_t messages_finished;
  std::size_t messages_total;
  double wall_seconds;
};

class ScenarioRun {
 public:
  // Resolves names and builds everything; throws ConfigError on references to nothing.
  // `routing_progress`, when given, hears how far route compilation is (groups done, of
  // all): on a large fabric the longest phase before the first event; `trace_progress`
  // how far a generated training step is (data-parallel replicas made, of all);
  // `setup_note` each other step of the set-up as it ends, with its seconds (a
  // collective's program built, then checked and prepared).
  explicit ScenarioRun(ScenarioConfig config, const RoutingProgress& routing_progress = {},
                       const RoutingProgress& trace_progress = {}, const SetupNote& setup_note = {});
  ScenarioRun(const ScenarioRun&) = delete;
  ScenarioRun& operator=(const ScenarioRun&) = delete;

  // Runs to completion or to the stop limits; `progress` is called between chunks of
  // events (never per event): the first after 65,536 events, then about once a second,
  // at most 4 million events apart, so a long run can report on a terminal however slow
  // its events are.
  void run(const std::function<void(const Progress&)>& progress = {});
  static constexpr std::uint64_t kFirstProgressEvents = 1 << 16;  // a run of more has reported

  const ScenarioConfig& config() const { return config_; }
  const Topology& topology() const { return topology_; }
  const std::vector<AppliedFault>& applied_faults() const { return applied_faults_; }
  const Network& network() const { return *network_; }
  // Before run(): what a workload would set on the messages made from the config.
  Network& network() { return *network_; }
  const Simulator& sim() const { return *sim_; }
  // Events run, and the simulated time reached (a split run's, over its partitions).
  std::uint64_t events() const;
  Time sim_time() const;
  // The split run's engine (its statistics), when the run is split (asked with --threads,
  // or unasked: setup_threads.h); null on one queue.
  const ParallelEngine* parallel() const { return engine_.get(); }
  ParallelEngine* parallel() { return engine_.get(); }
  const FlowModel* flow_model() const { return flow_model_.get(); }  // null at packet fidelity
  const char* partitioner() const { return partitioner_; }  // how the split was made
  StopReason stop_reason() const { return stop_reason_; }
  // Why a run that stopped making progress was stopped (stop reason kNoProgress).
  const std::optional<NoProgress>& no_progress() const { return no_progress_; }
  bool complete() const;  // every message acknowledged
  std::size_t messages_finished() const;
  double wall_seconds() const { return wall_seconds_; }
  // From the config to the first event: building the fabric, routes and workload.
  double setup_wall_seconds() const { return setup_wall_seconds_; }
  int setup_threads() const { return setup_threads_; }
  // When a message was meant to start: its configured start, or (for messages a
  // collective creates during the run) when it was posted.
  Time message_start(MessageId id) const { return id < starts_.size() ? starts_[id] : network_->messages()[id].posted; }
  // Messages [first_workload_message(), end) come from the workload section.
  MessageId first_workload_message() const { return first_workload_; }
  const std::optional<LoadWindow>& load_window() const { return window_; }
  // The collective workload's rows, when there is one.
  const CollectiveSweep* collective() const { return collective_; }
  // Several jobs (config `jobs`): each one's collective, its endpoints, and its times
  // when it ran alone on the same endpoints (after measure_jobs_alone()).
  std::size_t job_count() const { return jobs_.size(); }
  const CollectiveSweep& job(std::size_t j) const { return *jobs_[j]; }
  const std::vector<HostId>& job_hosts(std::size_t j) const { return job_hosts_[j]; }
  const std::vector<std::vector<Time>>& jobs_alone() const { return jobs_alone_; }
  // Runs each job alone on the same fabric and endpoints, for the interference figures.
  void measure_jobs_alone();
  // The trace replay, when the workload is one.
  const TraceReplay* replay() const { return replay_; }
  // An endpoint's line rate: the sum of its links' bandwidths.
  double endpoint_rate_bps(HostId h) const;
  // A PFC deadlock stopped the run; the cycle as (switch, egress port) hops.
  bool deadlocked() const { return detector_ && detector_->deadlocked(); }
  const DeadlockDetector* deadlock_detector() const { return detector_.get(); }
  // The memory this run was estimated to need before it was built.
  const MemoryEstimate& memory_estimate() const { return memory_; }
  // What is kept of single messages as they finish (and per-message records on request).
  MessageLog& message_log() { return *message_log_; }
  const MessageLog& message_log() const { return *message_log_; }
  // Queue depth samples, when configured: per link direction, bytes waiting at each tick.
  Time queue_sample_interval() const { return config_.network.lossless.queue_sample_interval; }
  const std::vector<std::vector<std::int64_t>>& queue_samples() const { return queue_samples_; }
  // For recorders, before run(): the workload's ranks report what they do to `listener`,
  // and `monitor` runs first at `first` on the clock that watches the run (order key
  // `order` among monitors; it reschedules itself and retires when work runs out).
  void set_activity_listener(ActivityListener* listener);
  // Messages made in the run (every process's, over MPI).
  std::uint64_t messages_created() const;
  // A collective or trace split over threads (its messages' serials depend on the threads' pace).
  bool splits_collective() const { return engine_ != nullptr && !drivers_.empty(); }
  void add_monitor(EventHandler& monitor, std::uint32_t order, Time first);
  Simulator& monitor_clock() { return *sim_; }

 private:
  // Building, in order (app/scenario_build.cpp).
  void apply_config_faults();   // what-if faults that hold from the start
  void refuse_if_too_big();     // the memory estimate against what is free
  void build_network(NetworkOptions options, const RoutingProgress& routing_progress);
  void add_traffic(const RoutingProgress& trace_progress, const SetupNote& setup_note);  // messages, jobs, the workload
  void start_watchers();        // deadlock check, queue sampler, a split run's engine
  // The workloads (app/scenario_workload.cpp).
  void add_workload(const RoutingProgress& trace_progress, const SetupNote& setup_note);
  // Owns `driver` and starts it at `at`.
  void add_driver(std::unique_ptr<WorkloadDriver> driver, Time at);
  // Located errors for what a split run cannot do yet.
  void check_splittable() const;
  std::optional<ConfigError> split_refusal() const;  // why this run cannot be split, if it cannot
  bool splits_unasked() const;                        // may split itself without --threads
  void schedule_message(Time start, MessageId id);
  // A run split over processes, once it is over: every process takes what the others'
  // partitions counted (ports, NICs, switches, message records, queue samples), so each
  // holds the whole run's state, as one process would.
  void gather_processes();
  // The workload's `placement` as endpoints (empty when not given); unknown names are
  // located config errors.
  std::vector<HostId> placement() const;
  std::uint64_t delivered_payload() const;
  // The watchdog's side (app/scenario/scenario_stall.cpp): messages posted and unfinished,
  // a handler's name and state, and the diagnosis of a stalled run: watching at most
  // `events_left` more events up to `until`, a serial run; a split one is not watched.
  std::uint64_t messages_waiting() const;
  std::string handler_name(const EventHandler& h) const;
  // Confirms and diagnoses a stall (no_progress_ set, nullopt); or, where the run moved
  // on or ended while being watched, how that stretch stopped (it was not stuck).
  std::optional<StopReason> diagnose_no_progress(const Stall& stall, Time until, std::uint64_t events_left);
  std::size_t local_messages_finished() const;  // counted by this process's NICs

  ScenarioConfig config_;
  Topology topology_;
  std::vector<AppliedFault> applied_faults_;
  MemoryEstimate memory_;
  // Threads for the set-up (routes, a generated step, pages copied aside): setup_threads.h.
  int setup_threads_ = 1;
  bool threads_asked_ = false;  // --threads given: a split kept as asked
  std::unique_ptr<Simulator> sim_;  // unsplit: everything; split: the monitors' clock
  std::vector<std::unique_ptr<Simulator>> partitions_;
  std::unique_ptr<Network> network_;
  std::unique_ptr<FlowRouter> flow_router_;  // flow fidelity only
  std::unique_ptr<FlowModel> flow_model_;
  std::unique_ptr<ParallelEngine> engine_;
  std::unique_ptr<TraceAhead> trace_ahead_;  // a generated step being made while the fabric is built
  Time time_limit_reached_ = 0;
  const char* partitioner_ = "";
  std::vector<std::unique_ptr<MessageSchedule>> schedules_;  // by sending endpoint (null: none)
  std::vector<Time> starts_;
  MessageId first_workload_ = 0;
  std::optional<LoadWindow> window_;
  std::unique_ptr<DeadlockDetector> detector_;
  std::unique_ptr<MessageLog> message_log_;
  // The workload's drivers (the workload's, or one per job), and views of them by kind
  // for the writers.
  std::vector<std::unique_ptr<WorkloadDriver>> drivers_;
  CollectiveSweep* collective_ = nullptr;
  std::vector<CollectiveSweep*> jobs_;
  TraceReplay* replay_ = nullptr;
  std::vector<std::vector<HostId>> job_hosts_;
  std::vector<std::vector<Time>> jobs_alone_;
  void add_jobs();
  std::uint64_t created_total_ = 0;  // over MPI: every process's messages, once pooled
  std::unique_ptr<FaultTimeline> fault_timeline_;  // failures during the run (null: none)
  // Samples queue depths every interval while anything else is pending.
  struct QueueSampler final : EventHandler {
    ScenarioRun* run = nullptr;
    void on_event() override;
  };
  QueueSampler sampler_;
  std::vector<std::vector<std::int64_t>> queue_samples_;
  StopReason stop_reason_ = StopReason::kQueueEmpty;
  std::optional<NoProgress> no_progress_;
  Time split_last_work_ = -1;  // over processes: the last piece of work's time
  double wall_seconds_ = 0;
  double setup_wall_seconds_ = 0;
};

}  // namespace fabricsim
