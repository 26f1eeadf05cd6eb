#pragma once
// Runs a collective workload over a scenario's network: one size, or nccl-tests-style
// sizes back to back, and keeps one result row per size. Each size starts one notice
// after the previous one's last rank finished: the fabric's longest link latency, the
// time word of the end takes to reach every rank (nccl-tests' ranks meet between sizes).
// So a run split over threads, whose partitions hear of the end between windows, starts
// every rank at the same time as a serial run does.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workloads/workload_driver.h"
#include "app/workload/setup_note.h"
#include "app/workload/tuner_facts.h"
#include "workloads/collectives/collective_algorithms.h"
#include "app/config/config.h"
#include "app/validation/error_bands.h"
#include "sim/network.h"
#include "sim/parallel/process_group.h"
#include "topologies/topology.h"
#include "workloads/collectives/collective_executor.h"
#include "workloads/collectives/coupled_ring.h"

namespace fabricsim {

struct CollectiveRow {
  std::int64_t size_bytes = 0;
  Time time = -1;  // -1: did not finish
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::string data_check;  // "passed", "off", or what was wrong
  std::string algorithm;   // what ran (the tuner's choice under `auto`)
  std::string protocol = "Simple";
  double nccl_model_us = -1;  // NCCL's own prediction for what ran (-1: no NCCL model ran)
  // The errors the accuracy corpus saw for rows like this one (AllReduce under NCCL's
  // model only: what the corpus measured); not found elsewhere.
  ErrorBand error_band;
};

class CollectiveSweep final : public WorkloadDriver {
 public:
  // Checks the algorithm for every size before the run (throws ConfigError naming the
  // workload key on a problem: an unsupported group size, a custom algorithm that does
  // not fit together or computes a wrong result).
  // Rank r runs on placement[r] (empty: on endpoint r). `note` hears of each size's
  // program as it is built and as it is checked (and, the first size's, prepared).
  CollectiveSweep(Network& network, const Topology& topology, const ScenarioConfig& config, std::vector<HostId> placement = {},
                  const SetupNote& note = {});

  // Starts the first size at `at` (before the run). `split`: the run is split over
  // threads, and poll() is called between windows to see the end of each size.
  void begin_at(Time at, bool split = false);
  void start(Time at, bool split) override { begin_at(at, split); }
  void between_windows(ProcessGroup* group) override { poll(group); }
  // Every size has run to its end.
  bool done() const override;
  // Between windows of a split run; over MPI processes (`group`), every process calls it
  // after every window: the ranks' ends are pooled.
  void poll(ProcessGroup* group = nullptr);
  const std::vector<CollectiveRow>& rows() const { return rows_; }
  int ranks() const { return ranks_; }
  const CollectiveConfig& config() const { return config_; }
  // Which model ran: NCCL's (its release line's rules) or the ideal network (asked for, or
  // a host fabric: no GPUs' NVLink nor NICs for NCCL's model to cost).
  bool nccl_model() const { return runs_nccl_model(config_.protocol, tuner_facts_); }
  const std::string& nccl_version() const { return tuner_facts_.nccl_version; }
  std::string model_description() const;
  // Where this collective's system lies outside the accuracy corpus (one line each).
  const std::vector<std::string>& validation_gaps() const { return validation_gaps_; }
  // Executors still held: the running size's and the finished ones not yet freed.
  std::size_t executors_held() const { return finished_.size() + (current_ ? 1 : 0); }
  // Told of each rank's part of each size and of its steps (timelines); before the run.
  void set_activity_listener(ActivityListener* listener) override {
    activity_ = listener;
    if (current_) current_->set_activity_listener(listener);  // the first size, made at begin_at()
  }

 private:
  CollectiveProgram program_for(std::int64_t bytes) const;
  // The algorithm and protocol for this size: the configured ones, or the tuner's
  // choice under `auto`.
  TunerChoice choice_for(std::int64_t bytes) const;
  void start_next(Time at);  // records the size that ended and starts the next at `at`
  // The pipelining piece: the config's chunk_bytes, else NCCL's for the protocol.
  std::int64_t chunk_bytes_for(const TunerChoice& choice, std::int64_t bytes) const;
  // Flow fidelity with network.flow_rings as the trace replay reads it: this size's ring
  // as one flow per channel (workloads/collectives/coupled_ring.h), its edges on the
  // endpoints, in NCCL's pipeline's pieces; empty where it runs step by step (another
  // algorithm, data checking, reductions with a cost, a timeline).
  std::vector<CoupledRing::Ring> coupled_rings_for(std::int64_t bytes, const TunerChoice& choice) const;
  CoupledRing::Costs coupled_costs(const std::vector<CoupledRing::Ring>& rank_rings, const TunerChoice& choice) const;
  void start_coupled(std::vector<CoupledRing::Ring> rank_rings, const TunerChoice& choice, Time at);

  Network* network_;
  CollectiveConfig config_;
  std::string config_dir_;
  std::uint8_t traffic_class_;
  int ranks_ = 0;
  int local_size_ = 0;
  bool one_node_ = false;  // every rank in one NVLink domain
  Time nvls_latency_ = 0;
  TunerFacts tuner_facts_;
  std::vector<std::string> validation_gaps_;
  std::vector<HostId> hosts_;
  std::vector<std::uint32_t> rank_node_;  // per rank (empty: one node)
  std::vector<CollectiveRow> rows_;
  std::size_t next_ = 0;
  Time notice_ = 0;  // the fabric's longest link latency
  bool split_ = false;
  ActivityListener* activity_ = nullptr;
  // The first size's program, checked and prepared with the workload: taken when it starts.
  std::shared_ptr<const PreparedCollective> first_prepared_;
  std::unique_ptr<CollectiveExecutor> current_;
  std::vector<std::unique_ptr<CollectiveExecutor>> finished_;  // kept until quiescent: the message table observes them
  NetworkConfig::FlowRings flow_rings_ = NetworkConfig::FlowRings::kSteps;  // packet fidelity: steps
  std::unique_ptr<CoupledRing> ring_;  // the running size's, when coupled
  Time ring_started_ = 0;
  Time ring_finished_ = 0;
  std::vector<std::unique_ptr<CoupledRing>> finished_rings_;  // kept until idle, as finished_
};

}  // namespace fabricsim
