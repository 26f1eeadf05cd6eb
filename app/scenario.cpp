#include "app/scenario.h"

#include "app/tuner_facts.h"
#include "app/huge_pages.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include <filesystem>
#include <stdexcept>

#include "app/config/config_error.h"
#include "sim/process_group.h"
#include "topologies/partition.h"
#include "topologies/analysis.h"
#include "topologies/cluster.h"
#include "topologies/compile.h"
#include "topologies/faults.h"
#include "sim/rng.h"
#include "workloads/traffic/flow_size_cdf.h"
#include "workloads/traffic/synthetic_traffic.h"
#include "workloads/traces/chakra/chakra_import.h"
#include "workloads/traces/trace.h"
#include "workloads/traces/transformer_trace.h"
#include "app/config/model_files.h"

namespace fabricsim {

namespace {

// What `read` throws, a ConfigError aside, becomes a config error at `source`'s key.
template <class Read>
auto read_at(const SourceRef& source, Read read) {
  try {
    return read();
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    throw ConfigError(source.where, source.path, e.what());
  }
}

// `workload: {kind: trace, generate: ...}`: the step `fabricsim workload gen` would write,
// made in memory. A model or GPU file that cannot be read is a config error at its key.
Trace generate_trace(const TraceWorkloadConfig& t, const RoutingProgress& progress) {
  const ModelSpec model = read_at(t.model_source, [&] { return load_model_file(t.model_file); });
  const GpuProfile gpu = read_at(t.gpu_source, [&] { return load_gpu_profile(t.gpu_file); });
  ParallelSpec par;
  par.tp = t.tp;
  par.pp = t.pp;
  par.dp = t.dp;
  par.ep = t.ep;
  par.microbatches = t.microbatches;
  par.bucket_bytes = t.bucket_bytes;
  par.zero = t.zero;
  return generate_transformer_trace(model, par, gpu, progress);
}

}  // namespace

Topology build_topology(const TopologyConfig& config) {
  Topology t;
  using K = TopologyConfig::Kind;
  try {
    switch (config.kind) {
      case K::kLeafSpine: t = leaf_spine_topology(config.leaf_spine); break;
      case K::kFatTree: t = fat_tree_topology(config.fat_tree); break;
      case K::kRailOptimized: t = rail_optimized_topology(config.rail_optimized); break;
      case K::kTorus3d: t = torus3d_topology(config.torus3d); break;
      case K::kNvSwitch: t = nvswitch_topology(config.nvswitch); break;
      case K::kCluster: t = cluster_topology(config.cluster); break;
      case K::kCustom: {
        const CustomTopologyConfig& c = config.custom;
        for (const auto& h : c.hosts) t.add_host(h);
        for (const auto& s : c.switches) t.add_switch(s);
        for (const auto& l : c.links) t.connect(*t.find(l.a), *t.find(l.b), l.link, "link");
        break;
      }
    }
  } catch (const std::invalid_argument& e) {
    throw ConfigError(config.source.where, config.source.path, e.what());
  }
  if (std::string problem = check_topology(t); !problem.empty()) {
    throw ConfigError(config.source.where, config.source.path, problem);
  }
  return t;
}

ScenarioRun::ScenarioRun(ScenarioConfig config, const RoutingProgress& routing_progress, const RoutingProgress& trace_progress)
    : config_(std::move(config)) {
  const auto setup_start = std::chrono::steady_clock::now();
  topology_ = build_topology(config_.topology);
  if (!config_.faults.empty()) {
    // What-if changes before routing: routes go around what is down.
    std::vector<FaultSpec> specs;
    for (const FaultConfig& f : config_.faults) specs.push_back(f.spec);
    try {
      applied_faults_ = apply_faults(topology_, specs);
    } catch (const FaultError& e) {
      const SourceRef& at = config_.faults[e.fault].source;
      throw ConfigError(at.where, at.path, e.what);
    }
    if (std::string problem = check_topology(topology_); !problem.empty()) {
      const SourceRef& at = config_.faults.front().source;
      throw ConfigError(at.where, "faults", "with these faults " + problem);
    }
  }
  // Known before anything big is built: refuse what cannot fit, rather than fail in an
  // allocation minutes later.
  memory_ = estimate_memory(config_, topology_);
  const std::uint64_t limit = config_.memory_limit > 0 ? config_.memory_limit : available_memory();
  if (limit > 0 && memory_.total() > limit) {
    const auto gib = [](std::uint64_t b) {
      char s[32];
      std::snprintf(s, sizeof s, "%.2f GiB", static_cast<double>(b) / (1u << 30));
      return std::string(s);
    };
    throw ConfigError(config_.topology.source.where, config_.topology.source.path,
                      "this run needs about " + memory_.describe() + ", more than the " + gib(limit) +
                          (config_.memory_limit > 0 ? " of --memory-limit" : " this machine has free") +
                          "; expected a smaller fabric or workload");
  }
  const NetworkConfig& n = config_.network;
  NetworkOptions options;
  options.params.traffic_classes = n.traffic_classes;
  options.params.load_balancing = n.load_balancing;
  options.params.salt_seed = config_.seed;
  options.params.nic.mtu = static_cast<std::uint32_t>(n.mtu);
  options.params.nic.header_bytes = static_cast<std::uint32_t>(n.header_bytes);
  options.params.nic.ack_bytes = static_cast<std::uint32_t>(n.ack_bytes);
  options.params.nic.ack_interval = static_cast<std::uint32_t>(n.ack_interval);
  options.params.nic.fetch_window_bytes = static_cast<std::uint32_t>(n.fetch_window);
  options.params.nic.ack_traffic_class = static_cast<std::uint8_t>(n.ack_traffic_class);
  // A gap means loss only where paths deliver in order: switches pin flows (ECMP) and no
  // endpoint spreads a message over several links (a GPU's NVLink trunks do).
  bool multi_port_endpoint = false;
  {
    std::vector<int> links(topology_.host_count(), 0);
    for (const TopologyLink& l : topology_.links()) {
      for (std::uint32_t end : {l.a, l.b}) {
        if (topology_.node(end).kind == NodeKind::kHost && ++links[topology_.node(end).kind_index] > 1) multi_port_endpoint = true;
      }
    }
  }
  options.params.nic.nack_on_gap = n.load_balancing == LoadBalancing::kEcmp && !multi_port_endpoint;
  options.switch_queue_capacity_bytes = n.queue_capacity;
  const LosslessConfig& lossless = n.lossless;
  options.params.shared_buffer = lossless.shared_buffer;
  options.params.buffer = lossless.buffer;
  options.params.pfc_classes_mask = lossless.pfc_classes_mask;
  options.params.ecn = lossless.ecn;
  options.params.ecn_by_speed = lossless.ecn_by_speed;
  options.params.nic.ecn_capable = lossless.ecn.enabled;
  options.params.nic.congestion_control = lossless.congestion_control;
  if (lossless.congestion_control) options.params.nic.network_rtt = largest_base_rtt(topology_, n.mtu + n.header_bytes, n.ack_bytes);
  options.params.nic.retransmit_timeout = lossless.retransmit_timeout;
  options.params.nic.nack_interval = lossless.nack_interval;
  options.dateline = lossless.dateline;
  // A flow-level run has no endpoints' transport to place: its NICs stay links' ends.
  options.rdma_nics = config_.topology.kind == TopologyConfig::Kind::kCluster && config_.topology.cluster.rdma_nics &&
                      n.fidelity == NetworkConfig::Fidelity::kPacket;

  sim_ = std::make_unique<Simulator>(config_.seed);
  sim_->packets().set_chunk_advice(advise_huge_pages);
  sim_->slot_blocks().set_chunk_advice(advise_huge_pages);
  const int processes = config_.processes != nullptr ? config_.processes->size() : 1;
  if (config_.threads > 0 || processes > 1) {
    check_splittable();
    // Under mpirun: --threads per process (default one), so a partition per thread of each.
    const int parts = std::max(processes, config_.partitions > 0 ? config_.partitions : std::max(1, config_.threads) * processes);
    // The builders number hosts by pod, node or slab: split by that structure. A custom
    // graph's numbers say nothing: split it as a graph (METIS).
    const PartitionMethod method =
        config_.topology.kind == TopologyConfig::Kind::kCustom ? PartitionMethod::kGraph : PartitionMethod::kStructure;
    const Partitioning split = partition_topology(topology_, static_cast<std::uint32_t>(parts), method);
    partitioner_ = split.method;
    for (std::uint32_t q = 0; q < split.partitions; ++q) {
      partitions_.push_back(std::make_unique<Simulator>(config_.seed));
      partitions_.back()->packets().set_chunk_advice(advise_huge_pages);
      partitions_.back()->slot_blocks().set_chunk_advice(advise_huge_pages);
      options.partitions.push_back(partitions_.back().get());
    }
    options.node_partition = split.node_partition;
  }
  try {
    network_ = compile_network(topology_, *sim_, options, routing_progress);
  } catch (const std::invalid_argument& e) {
    if (!config_.faults.empty()) {
      // The fabric was whole before its faults (build_topology checked it).
      throw ConfigError(config_.faults.front().source.where, "faults", std::string("these faults cut the fabric: ") + e.what());
    }
    throw ConfigError(config_.topology.source.where, config_.topology.source.path, e.what());
  }
  if (config_.processes != nullptr && !partitions_.empty()) {
    // Which partitions this process runs: agents register for remote senders from now.
    std::vector<bool> local(partitions_.size());
    for (std::size_t q = 0; q < local.size(); ++q) {
      local[q] = partition_owner(q, partitions_.size(), config_.processes->size()) == config_.processes->rank();
    }
    network_->set_local_partitions(std::move(local));
  }
  if (n.fidelity == NetworkConfig::Fidelity::kFlow) {
    // The compiled network still routes (its tables say where each flow goes); its ports
    // and NICs stay idle.
    flow_router_ = std::make_unique<FlowRouter>(*network_);
    if (config_.topology.kind == TopologyConfig::Kind::kCluster && config_.topology.cluster.rdma_nics) {
      std::vector<int> port(network_->host_count(), -1);
      for (const LinkDirection& d : network_->directions()) {
        if (d.from.kind == NodeRef::Kind::kHost && d.to.kind == NodeRef::Kind::kSwitch &&
            topology_.node(topology_.switch_node(d.to.index)).role == "nic") {
          port[d.from.index] = d.from_port;
        }
      }
      flow_router_->set_rdma_nic_ports(std::move(port));
    }
    flow_model_ = std::make_unique<FlowModel>(*sim_, flow_router_->capacities(), &network_->dispatcher());
    flow_model_->set_order(network_->next_order_key());
    flow_model_->set_rate_interval(n.flow_rate_interval);
    network_->set_flow_model(flow_model_.get(), flow_router_.get());
  }
  prepare_timed_faults();
  // One schedule per sending endpoint, in its partition: the same events however the run
  // is split.
  schedules_.resize(network_->host_count());
  const auto schedule = [&](Time start, MessageId id) { schedule_message(start, id); };
  message_log_ = std::make_unique<MessageLog>(*this, partitions_.size());
  network_->dispatcher().set_tap(message_log_.get());
  const auto host = [&](const std::string& name, const SourceRef& src) {
    const auto node = topology_.find(name);
    if (!node || topology_.node(*node).kind != NodeKind::kHost) {
      throw ConfigError(src.where, src.path, "expected the name of an endpoint (host or GPU), got '" + name + "'");
    }
    return topology_.node(*node).kind_index;
  };
  for (const MessageConfig& m : config_.messages) {
    const HostId src = host(m.src, m.src_source);
    const HostId dst = host(m.dst, m.dst_source);
    const MessageId id = network_->add_message(src, dst, m.bytes, static_cast<std::uint8_t>(m.traffic_class));
    schedule(m.start, id);
    starts_.push_back(m.start);
  }
  first_workload_ = static_cast<MessageId>(starts_.size());
  if (!config_.jobs.empty()) add_jobs();
  if (config_.workload.kind != WorkloadConfig::Kind::kNone) {
    if (config_.workload.kind == WorkloadConfig::Kind::kIncast && !config_.workload.receiver.empty()) {
      host(config_.workload.receiver, config_.workload.receiver_source);
    }
    add_workload(trace_progress);
  }
  for (auto& s : schedules_) {
    if (s) s->arm();
  }
  // Messages made before the run keep their slots for the results; later ones (a
  // collective's, a trace's) reuse finished slots, so memory follows what is in flight.
  network_->messages().set_recycle_from(static_cast<MessageId>(network_->messages().size()));
  const bool packets = n.fidelity == NetworkConfig::Fidelity::kPacket;  // flows have no queues to watch
  if (packets && lossless.pfc_classes_mask != 0 && lossless.deadlock_check_interval > 0) {
    detector_ = std::make_unique<DeadlockDetector>(*network_, lossless.deadlock_check_interval);
    detector_->start();
  }
  if (packets && lossless.queue_sample_interval > 0) {
    sampler_.run = this;
    queue_samples_.resize(network_->directions().size());
    add_monitor(sampler_, 1, 0);  // first at its time, after the deadlock check
  }
  if (!partitions_.empty()) {
    engine_ = std::make_unique<ParallelEngine>(*network_, *sim_, std::max(1, config_.threads), config_.processes);
    if (config_.processes != nullptr) {
      // Messages finished anywhere, for progress; records are written once the processes
      // have pooled them (they finish at other processes than deliver).
      engine_->set_window_sum([this] { return static_cast<std::int64_t>(local_messages_finished()); });
      message_log_->defer_to_end();
      if (detector_) detector_->set_process_group(config_.processes);
      // Messages made from here on to another process's endpoints go by notice (those
      // made before the run are in every process's table alike).
      network_->open_receives_by_notice();
      if (collective_ || replay_ || !jobs_.empty()) {
        engine_->set_window_hook([this, group = config_.processes] {
          if (collective_) collective_->poll(group);
          for (auto& job : jobs_) job->poll(group);
          if (replay_) replay_->between_windows(group);
        });
      }
    } else {
      // Between windows the partitions' message records are merged into the stream, and
      // a collective's end is seen (its ranks finish on several threads).
      engine_->set_window_hook([this] {
        message_log_->flush();
        if (collective_) collective_->poll();
        for (auto& job : jobs_) job->poll();
        if (replay_) replay_->between_windows();
      });
    }
  }
  setup_wall_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();
}

void ScenarioRun::prepare_timed_faults() {
  std::vector<FaultSpec> specs;
  for (const FaultConfig& f : config_.faults) specs.push_back(f.spec);
  std::vector<TimedFault> timed;
  try {
    timed = timed_faults(topology_, specs);
  } catch (const FaultError& e) {
    const SourceRef& at = config_.faults[e.fault].source;
    throw ConfigError(at.where, at.path, e.what);
  }
  if (timed.empty()) return;
  const SourceRef& first = config_.faults[timed.front().fault].source;
  if (config_.network.fidelity == NetworkConfig::Fidelity::kFlow) {
    throw ConfigError(first.where, first.path + ".at",
                      "failures during the run are modelled at packet fidelity; expected no `at` here, or fidelity packet");
  }
  // Each detection installs the routes without every link failed so far.
  std::vector<bool> down(topology_.links().size(), false);
  std::vector<FaultTimeline::Action> actions;
  std::vector<std::pair<Time, std::size_t>> detections;  // (time, index into timed)
  for (std::size_t i = 0; i < timed.size(); ++i) {
    actions.push_back({timed[i].at, timed[i].links, nullptr});
    detections.emplace_back(timed[i].detected, i);
    for (std::size_t l : timed[i].links) {
      const TopologyLink& link = topology_.links()[l];
      applied_faults_.push_back({timed[i].fault, topology_.node(link.a).name, topology_.node(link.b).name, link.tier, true,
                                 link.bandwidth, link.latency, timed[i].at, timed[i].detected});
    }
  }
  std::stable_sort(detections.begin(), detections.end());
  for (const auto& [when, i] : detections) {
    for (std::size_t l : timed[i].links) down[l] = true;
    auto routes = std::make_shared<Routes>(routes_without(topology_, down));
    if (!routes->unreachable.empty()) {
      const SourceRef& at = config_.faults[timed[i].fault].source;
      throw ConfigError(at.where, at.path, "this failure cuts the fabric: " + routes->unreachable);
    }
    actions.push_back({when, {}, std::move(routes)});
  }
  std::stable_sort(actions.begin(), actions.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
  fault_timeline_.run = this;
  fault_timeline_.actions = std::move(actions);
  // Each partition applies a failure to what it runs, from an event of its own at the
  // failure's time (first at that time: a monitor's key); the timeline, on the monitors'
  // clock, arms them a picosecond before, so the partitions' events are in round 0 of
  // that time for any split (a split run's monitors run between windows).
  for (std::size_t q = 0; q < network_->partition_count(); ++q) {
    FaultApplier& a = fault_appliers_.emplace_back();
    a.run = this;
    a.partition = static_cast<std::uint32_t>(q);
    a.set_order(2);
  }
  const Time first_time = fault_timeline_.actions.front().time;
  if (first_time == 0) {
    fault_timeline_.arm();  // before the run: at 0, in round 0
    if (fault_timeline_.next < fault_timeline_.actions.size()) {
      add_monitor(fault_timeline_, 2, fault_timeline_.actions[fault_timeline_.next].time - 1);
    }
  } else {
    add_monitor(fault_timeline_, 2, first_time - 1);
  }
}

void ScenarioRun::FaultTimeline::arm() {
  // The actions due at the next failure time, for every partition at that time.
  const Time at = actions[next].time;
  first = next;
  while (next < actions.size() && actions[next].time == at) ++next;
  for (FaultApplier& a : run->fault_appliers_) {
    a.first = first;
    a.last = next;
    run->network_->partition(a.partition).schedule_at(a, at);
  }
}

void ScenarioRun::FaultTimeline::on_event() {
  arm();
  if (next < actions.size() && run->sim_->work_pending()) {
    run->sim_->schedule_at(*this, actions[next].time - 1);
  } else {
    run->sim_->retire_monitor();
  }
}

void ScenarioRun::FaultApplier::on_event() {
  Network& net = *run->network_;
  const Topology& t = run->topology_;
  for (std::size_t k = first; k < last; ++k) {
    const FaultTimeline::Action& a = run->fault_timeline_.actions[k];
    // A cable's two directions are directions 2i and 2i + 1 (the network connects the
    // topology's links in order); each port is its sending node's partition's.
    for (std::size_t l : a.links) {
      for (std::size_t d : {2 * l, 2 * l + 1}) {
        const LinkDirection& dir = net.directions()[d];
        const std::uint32_t q = net.partition_of(dir.from);
        if (q == partition) {
          dir.port->set_down();
        } else if (!net.local_partition(q)) {
          dir.port->mark_down();  // another process runs it: this copy only reports it
        }
      }
    }
    if (a.routes) {
      for (std::uint32_t h = 0; h < t.host_count(); ++h) {
        if (net.host_partition(h) == partition) net.nic(h).set_routes(a.routes->tables[t.host_node(h)], &net.host_groups());
      }
      for (std::uint32_t s = 0; s < t.switch_count(); ++s) {
        if (net.switch_partition(s) == partition) net.switch_at(s).set_routes(a.routes->tables[t.switch_node(s)]);
      }
    }
  }
}

void ScenarioRun::add_jobs() {
  const auto endpoints = static_cast<std::uint32_t>(topology_.host_count());
  std::vector<bool> taken(endpoints, false);
  for (const JobConfig& job : config_.jobs) {
    std::vector<HostId> free;
    for (HostId h = 0; h < endpoints; ++h) {
      if (!taken[h]) free.push_back(h);
    }
    std::vector<HostId> hosts;
    if (job.placement == JobConfig::Placement::kList) {
      for (const std::string& name : job.hosts) {
        const auto node = topology_.find(name);
        if (!node || topology_.node(*node).kind != NodeKind::kHost) {
          throw ConfigError(job.source.where, job.source.path + ".placement", "expected endpoint names, got '" + name + "'");
        }
        hosts.push_back(topology_.node(*node).kind_index);
      }
    } else {
      if (static_cast<std::size_t>(job.ranks) > free.size()) {
        throw ConfigError(job.source.where, job.source.path + ".ranks",
                          "expected at most " + std::to_string(free.size()) + " ranks (the endpoints the jobs before it left free)");
      }
      const std::size_t n = static_cast<std::size_t>(job.ranks);
      if (job.placement == JobConfig::Placement::kPacked) {
        hosts.assign(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(n));
      } else if (job.placement == JobConfig::Placement::kSpread) {
        for (std::size_t r = 0; r < n; ++r) hosts.push_back(free[r * free.size() / n]);
      } else {
        Rng rng(job.seed);
        for (std::size_t k = 0; k < n; ++k) std::swap(free[k], free[k + rng.next() % (free.size() - k)]);
        hosts.assign(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(n));
        std::sort(hosts.begin(), hosts.end());
      }
    }
    for (HostId h : hosts) {
      if (taken[h]) {
        throw ConfigError(job.source.where, job.source.path + ".placement",
                          "endpoint '" + topology_.node(topology_.host_node(h)).name + "' is another job's");
      }
      taken[h] = true;
    }
    ScenarioConfig c = config_;
    c.workload = job.workload;
    c.jobs.clear();
    c.messages.clear();
    jobs_.push_back(std::make_unique<CollectiveSweep>(*network_, topology_, c, hosts));
    jobs_.back()->begin_at(job.workload.start, !partitions_.empty());
    job_hosts_.push_back(std::move(hosts));
  }
}

void ScenarioRun::measure_jobs_alone() {
  jobs_alone_.clear();
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    ScenarioConfig c = config_;
    JobConfig job = config_.jobs[j];
    job.placement = JobConfig::Placement::kList;
    job.hosts.clear();
    for (HostId h : job_hosts_[j]) job.hosts.push_back(topology_.node(topology_.host_node(h)).name);
    c.jobs = {job};
    ScenarioRun alone(std::move(c));
    alone.run();
    std::vector<Time> times;
    for (const CollectiveRow& row : alone.job(0).rows()) times.push_back(row.time);
    jobs_alone_.push_back(std::move(times));
  }
}

void ScenarioRun::schedule_message(Time start, MessageId id) {
  const HostId src = network_->messages()[id].src;
  auto& s = schedules_[src];
  if (!s) s = std::make_unique<MessageSchedule>(*network_, network_->partition(network_->host_partition(src)));
  s->add(start, id);
}

void ScenarioRun::check_splittable() const {
  const WorkloadConfig& w = config_.workload;
  using K = WorkloadConfig::Kind;
  if (config_.network.fidelity == NetworkConfig::Fidelity::kFlow) {
    throw ConfigError(config_.file, "network.fidelity",
                      "a flow-level run is one solver over the whole fabric and runs on one thread: expected no --threads "
                      "(and no mpirun) with fidelity flow");
  }
  // Several jobs are collectives too: each is held to the same rules.
  std::vector<std::pair<const CollectiveConfig*, std::string>> collectives;
  if (w.kind == K::kCollective) collectives.emplace_back(&w.collective, "workload");
  for (const JobConfig& job : config_.jobs) collectives.emplace_back(&job.workload.collective, job.source.path + ".workload");
  if ((w.kind == K::kTrace || w.kind == K::kChakra) && w.trace.ideal_network) {
    throw ConfigError(config_.file, "workload.network",
                      "an ideal network hands data from rank to rank in no time, across partitions: expected no "
                      "--threads (or mpirun) with network: ideal");
  }
  for (const auto& [c, key] : collectives) {
    if (c->check_data && config_.processes != nullptr) {
      throw ConfigError(config_.file, key + ".check_data",
                        "data checking follows every rank's data in one verifier, in one process's memory: expected "
                        "check_data: false under mpirun (--threads checks data)");
    }
  }
  if (config_.stop.events < static_cast<std::uint64_t>(INT64_MAX)) {  // the default is no limit
    throw ConfigError(config_.file, "stop.events",
                      "an event limit has no meaning that is the same for every split; expected stop.time with --threads or mpirun");
  }
}

std::uint64_t ScenarioRun::events() const {
  if (engine_) return engine_->events();
  return sim_->events_processed() - sim_->monitor_events();  // the run's, not its observers'
}

Time ScenarioRun::sim_time() const {
  if (!engine_) {
    // Run out of events: it ended with its last piece of work, not its monitors' last look.
    if (stop_reason_ == StopReason::kQueueEmpty && sim_->last_work_time() >= 0) return sim_->last_work_time();
    return sim_->now();
  }
  if (stop_reason_ == StopReason::kTimeLimit) return time_limit_reached_;
  if (stop_reason_ == StopReason::kQueueEmpty && config_.processes != nullptr) {
    if (split_last_work_ >= 0) return split_last_work_;
  } else if (stop_reason_ == StopReason::kQueueEmpty) {
    // The partitions run the work; the monitors watch from a clock of their own.
    Time last = -1;
    for (const auto& p : partitions_) last = std::max(last, p->last_work_time());
    if (last >= 0) return last;
  }
  return engine_->last_event_time();
}

void ScenarioRun::set_activity_listener(ActivityListener* listener) {
  if (collective_) collective_->set_activity_listener(listener);
  for (auto& job : jobs_) job->set_activity_listener(listener);
  if (replay_) replay_->set_activity_listener(listener);
}

void ScenarioRun::add_monitor(EventHandler& monitor, std::uint32_t order, Time first) {
  monitor.set_order(order);
  sim_->register_monitor();
  sim_->schedule_at(monitor, first);
}

void ScenarioRun::QueueSampler::on_event() {
  const auto& dirs = run->network_->directions();
  for (std::size_t i = 0; i < dirs.size(); ++i) run->queue_samples_[i].push_back(dirs[i].port->queued_bytes());
  if (run->sim_->work_pending()) {
    run->sim_->schedule_in(*this, run->config_.network.lossless.queue_sample_interval);
  } else {
    run->sim_->retire_monitor();
  }
}

double ScenarioRun::endpoint_rate_bps(HostId h) const {
  double rate = 0;
  const std::uint32_t node = topology_.host_node(h);
  for (const TopologyLink& l : topology_.links()) {
    if (l.a == node || l.b == node) rate += static_cast<double>(l.bandwidth.bits_per_second);
  }
  return rate;
}

void ScenarioRun::add_workload(const RoutingProgress& trace_progress) {
  const WorkloadConfig& w = config_.workload;
  const auto endpoints = static_cast<std::uint32_t>(topology_.host_count());
  std::vector<Flow> flows;
  using K = WorkloadConfig::Kind;
  switch (w.kind) {
    case K::kPermutation: flows = permutation_traffic(endpoints, w.bytes, w.start, config_.seed); break;
    case K::kIncast: {
      const std::uint32_t receiver = w.receiver.empty() ? 0 : topology_.node(*topology_.find(w.receiver)).kind_index;
      const std::uint32_t senders = w.senders == 0 ? endpoints - 1 : static_cast<std::uint32_t>(w.senders);
      if (senders >= endpoints) {
        throw ConfigError(config_.file, "workload.senders", "expected at most " + std::to_string(endpoints - 1) + " senders");
      }
      flows = incast_traffic(endpoints, receiver, senders, w.bytes, w.start);
      break;
    }
    case K::kUniform: flows = uniform_traffic(endpoints, static_cast<std::uint32_t>(w.flows), w.bytes, w.start, config_.seed); break;
    case K::kPoisson: {
      std::filesystem::path cdf_path(w.flow_size_cdf);
      if (cdf_path.is_relative() && !config_.file.empty() && config_.file.front() != '<') {
        cdf_path = std::filesystem::path(config_.file).parent_path() / cdf_path;
      }
      FlowSizeCdf cdf;
      try {
        cdf = FlowSizeCdf::load(cdf_path.string());
      } catch (const std::runtime_error& e) {
        throw ConfigError(w.cdf_source.where, w.cdf_source.path, e.what());
      }
      std::vector<double> rates(endpoints);
      double capacity = 0;
      for (HostId h = 0; h < endpoints; ++h) capacity += rates[h] = endpoint_rate_bps(h);
      flows = poisson_traffic(rates, w.load, cdf, w.start, w.duration, config_.seed);
      // Measure over the middle 60% of the arrival period, away from the empty start and
      // the drain after the last arrival.
      LoadWindow lw;
      lw.from = w.start + w.duration / 5;
      lw.to = w.start + w.duration * 4 / 5;
      lw.target_load = w.load;
      double offered = 0;
      for (const Flow& f : flows) {
        if (f.start >= lw.from && f.start < lw.to) offered += static_cast<double>(f.bytes) * 8;
      }
      lw.offered_load = offered / (capacity * to_seconds(lw.to - lw.from));
      window_ = lw;
      break;
    }
    case K::kCollective:
      collective_ = std::make_unique<CollectiveSweep>(*network_, topology_, config_, placement());
      collective_->begin_at(w.start, !partitions_.empty());
      break;
    case K::kTrace:
    case K::kChakra: {
      std::filesystem::path path(w.trace.file);
      if (path.is_relative() && !config_.file.empty() && config_.file.front() != '<') {
        path = std::filesystem::path(config_.file).parent_path() / path;
      }
      Trace trace;
      try {
        if (w.trace.generate) {
          trace = generate_trace(w.trace, trace_progress);
        } else {
          trace = w.trace.chakra ? import_chakra(path.string(), w.trace.chakra_ranks, w.trace.process_groups) : read_trace(path.string());
        }
        if (trace.ranks > static_cast<int>(endpoints)) {
          throw std::invalid_argument("the trace has " + std::to_string(trace.ranks) + " ranks, the fabric " + std::to_string(endpoints) + " endpoints");
        }
      } catch (const std::exception& e) {
        throw ConfigError(w.trace.file_source.where, w.trace.file_source.path, e.what());
      }
      std::vector<HostId> hosts = placement();
      if (hosts.empty()) {
        for (int r = 0; r < trace.ranks; ++r) hosts.push_back(static_cast<HostId>(r));
      } else if (static_cast<int>(hosts.size()) != trace.ranks) {
        throw ConfigError(w.placement_sources.front().where, "workload.placement",
                          "expected " + std::to_string(trace.ranks) + " endpoints (one per rank of the trace), got " + std::to_string(hosts.size()));
      }
      ReplayOptions options;
      options.ideal_network = w.trace.ideal_network;
      options.generated = w.trace.generate;
      options.coupled_rings = config_.network.flow_rings == NetworkConfig::FlowRings::kCoupled  ? CoupledRings::kEvery
                              : config_.network.flow_rings == NetworkConfig::FlowRings::kInNode ? CoupledRings::kInNode
                                                                                                 : CoupledRings::kNone;
      options.default_algorithm = w.trace.algorithm;
      if (w.trace.algorithm == "auto") {
        // NCCL's choice per collective, from its members' place in the fabric (the network
        // alone: no protocol costs, so closed forms of the trace still hold).
        const TopologyConfig topology = config_.topology;
        const bool flow_fidelity = config_.network.fidelity == NetworkConfig::Fidelity::kFlow;  // no SHARP at flow fidelity
        options.choose = [topology, flow_fidelity](CollectiveOp op, std::int64_t bytes, const std::vector<HostId>& members) {
          TunerFacts facts = tuner_facts_for_group(topology, members);
          if (flow_fidelity) facts.sharp = false;
          return choose_algorithm(op, bytes, facts).algorithm;
        };
        if (topology.kind == TopologyConfig::Kind::kNvSwitch) options.nvls_latency_ps = topology.nvswitch.nvls_latency;
        if (topology.kind == TopologyConfig::Kind::kCluster) options.nvls_latency_ps = topology.cluster.node.nvls_latency;
      }
      options.params.channels = w.trace.channels;
      for (const StragglerConfig& st : w.trace.stragglers) {
        options.compute_scale.resize(static_cast<std::size_t>(trace.ranks), 1.0);
        Rng rng(st.seed);
        const auto factor = [&] {
          // Uniform in [compute, compute_max], 53 bits of the draw.
          const double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
          return st.compute + (st.compute_max - st.compute) * u;
        };
        if (st.fraction > 0) {
          std::vector<std::size_t> ranks(static_cast<std::size_t>(trace.ranks));
          for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r] = r;
          const auto count = static_cast<std::size_t>(std::llround(st.fraction * static_cast<double>(ranks.size())));
          for (std::size_t k = 0; k < count; ++k) {
            std::swap(ranks[k], ranks[k + rng.next() % (ranks.size() - k)]);
            options.compute_scale[ranks[k]] = factor();
          }
          continue;
        }
        if (st.rank >= trace.ranks) {
          throw ConfigError(st.source.where, st.source.path,
                            "expected a rank below " + std::to_string(trace.ranks) + " (the trace's ranks), got " + std::to_string(st.rank));
        }
        options.compute_scale[static_cast<std::size_t>(st.rank)] = factor();
      }
      options.params.local_size = config_.topology.kind == TopologyConfig::Kind::kCluster ? config_.topology.cluster.node.gpus : trace.ranks;
      {
        const std::vector<std::uint32_t> unit = node_units(topology_);
        for (std::uint32_t h = 0; h < topology_.host_count(); ++h) options.host_unit.push_back(unit[topology_.host_node(h)]);
      }
      options.collective.traffic_class = static_cast<std::uint8_t>(w.traffic_class);
      try {
        replay_ = std::make_unique<TraceReplay>(*network_, std::move(trace), std::move(hosts), options);
      } catch (const std::invalid_argument& e) {
        throw ConfigError(w.trace.file_source.where, w.trace.file_source.path, e.what());
      }
      replay_->start_at(w.start);
      break;
    }
    case K::kNone: break;
  }
  for (const Flow& f : flows) {
    const MessageId id = network_->add_message(f.src, f.dst, f.bytes, static_cast<std::uint8_t>(w.traffic_class));
    schedule_message(f.start, id);
    starts_.push_back(f.start);
  }
}

std::vector<HostId> ScenarioRun::placement() const {
  const WorkloadConfig& w = config_.workload;
  std::vector<HostId> hosts;
  for (std::size_t i = 0; i < w.placement.size(); ++i) {
    const auto node = topology_.find(w.placement[i]);
    if (!node || topology_.node(*node).kind != NodeKind::kHost) {
      throw ConfigError(w.placement_sources[i].where, w.placement_sources[i].path,
                        "expected the name of an endpoint (host or GPU), got '" + w.placement[i] + "'");
    }
    hosts.push_back(topology_.node(*node).kind_index);
  }
  return hosts;
}

std::uint64_t ScenarioRun::delivered_payload() const {
  if (flow_model_) return flow_model_->payload_delivered();
  std::uint64_t total = 0;
  for (HostId h = 0; h < network_->host_count(); ++h) total += network_->nic(h).counters().payload_bytes_received;
  if (config_.processes != nullptr && engine_) {
    // Mid-run, each process has counted its own NICs (the others' are idle here).
    std::vector<std::int64_t> v{static_cast<std::int64_t>(total)};
    config_.processes->all_sum(v);
    total = static_cast<std::uint64_t>(v[0]);
  }
  return total;
}

void ScenarioRun::run(const std::function<void(const Progress&)>& progress) {
  constexpr std::uint64_t kChunk = 4'000'000;
  const auto t0 = std::chrono::steady_clock::now();
  // The fabric is built: at scale its state goes onto huge pages (see huge_pages.h).
  back_heap_with_huge_pages(std::size_t{64} << 20);
  // And what the run adds to it, as it goes (queues grow, the packet pool's neighbours),
  // read in no order at scale. Only huge pages' worth at least half in use, so the
  // footprint grows little (docs/performance.md).
  const auto keep_on_huge_pages = [] { back_heap_with_huge_pages(std::size_t{64} << 20, 0.5); };
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  // Runs until `until` (or the stop limits), reporting progress between chunks; false
  // once the run is over for good.
  const auto run_serial = [&](Time until) {
    for (;;) {
      const std::uint64_t done = sim_->events_processed();
      const std::uint64_t left = config_.stop.events - std::min(done, config_.stop.events);
      const std::uint64_t chunk = std::min(left, kChunk);
      stop_reason_ = sim_->run(std::min(until, config_.stop.time), chunk);
      if (stop_reason_ != StopReason::kEventLimit) break;
      if (chunk == left) return false;
      keep_on_huge_pages();
      if (progress) {
        progress({sim_->now(), sim_->events_processed(), messages_finished(), network_->messages().created(), elapsed()});
      }
    }
    return stop_reason_ == StopReason::kTimeLimit && sim_->now() < config_.stop.time;
  };
  // The same over a split run's partitions (its engine reports progress between windows).
  const std::function<void()> report = [&] {
    keep_on_huge_pages();  // (between windows: the other threads wait)
    const std::size_t finished = config_.processes != nullptr ? static_cast<std::size_t>(engine_->window_sum()) : messages_finished();
    if (progress) progress({engine_->last_event_time(), engine_->events(), finished, network_->messages().created(), elapsed()});
  };
  const auto run_split = [&](Time until) {
    const Time limit = std::min(until, config_.stop.time);
    stop_reason_ = engine_->run(limit, report);
    if (stop_reason_ == StopReason::kTimeLimit) time_limit_reached_ = limit;
    return stop_reason_ == StopReason::kTimeLimit && limit < config_.stop.time;
  };
  const std::function<bool(Time)> run_until = engine_ ? std::function<bool(Time)>(run_split) : std::function<bool(Time)>(run_serial);
  if (window_) {
    std::uint64_t at_from = 0;
    if (run_until(window_->from)) {
      at_from = delivered_payload();
      if (run_until(window_->to)) {
        double capacity = 0;
        for (HostId h = 0; h < network_->host_count(); ++h) capacity += endpoint_rate_bps(h);
        window_->delivered_load = static_cast<double>(delivered_payload() - at_from) * 8 /
                                  (capacity * to_seconds(window_->to - window_->from));
      }
    }
  }
  run_until(kTimeMax);
  if (config_.processes != nullptr && engine_) gather_processes();
  wall_seconds_ = elapsed();
}

void ScenarioRun::gather_processes() {
  ProcessGroup& group = *config_.processes;
  Network& net = *network_;
  {
    Time last = -1;
    for (std::size_t q = 0; q < partitions_.size(); ++q) {
      if (engine_->owns(q)) last = std::max(last, partitions_[q]->last_work_time());
    }
    std::vector<std::int64_t> v{-last};
    group.all_min(v);
    split_last_work_ = -v[0];
  }
  const Time end = sim_time();
  const std::size_t partitions = net.partition_count();
  const auto owner = [&](NodeRef n) { return partition_owner(net.partition_of(n), partitions, group.size()); };
  const auto& dirs = net.directions();
  const bool sampled = !queue_samples_.empty();
  auto& messages = net.messages();
  // Each process sends what its own partitions ran, in a fixed order; a receiver walks
  // the same order for the sender's rank, so nothing needs naming.
  const int me = group.rank();
  // The messages made before the run (the same table in every process); those made
  // during it (a collective's, a trace's) are counted, each at its sender's process.
  const MessageId kept = std::min<MessageId>(messages.recycle_from(), static_cast<MessageId>(messages.size()));
  const auto write_mine = [&](auto& out) {
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      if (owner(dirs[i].from) != me) continue;
      put(out, dirs[i].port->counters_at(end));
      if (sampled) {
        for (std::int64_t x : queue_samples_[i]) put(out, x);
      }
    }
    for (HostId h = 0; h < net.host_count(); ++h) {
      if (owner(NodeRef::host(h)) == me) put(out, net.nic(h).counters());
    }
    for (std::uint32_t s = 0; s < net.switch_count(); ++s) {
      if (owner(NodeRef::sw(s)) != me) continue;
      put(out, net.switch_at(s).counters());
      if (net.is_rdma_nic(s)) put(out, net.rdma_nic(s).counters());
    }
    for (MessageId id = 0; id < kept; ++id) {
      const Message& m = messages[id];
      if (owner(NodeRef::host(m.src)) == me) {
        put(out, m.posted);
        put(out, m.finished);
      }
      if (owner(NodeRef::host(m.dst)) == me) put(out, m.delivered);
    }
  };
  const Bytes mine = written_once(write_mine);
  for_each_gathered(group, mine, [&](int r, const Bytes& theirs) {
    BytesReader in(theirs);
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      if (owner(dirs[i].from) != r) continue;
      dirs[i].port->adopt_counters(in.get<PortCounters>());
      if (sampled) {
        for (std::int64_t& x : queue_samples_[i]) x = in.get<std::int64_t>();
      }
    }
    for (HostId h = 0; h < net.host_count(); ++h) {
      if (owner(NodeRef::host(h)) == r) net.nic(h).adopt_counters(in.get<NicCounters>());
    }
    for (std::uint32_t s = 0; s < net.switch_count(); ++s) {
      if (owner(NodeRef::sw(s)) != r) continue;
      net.switch_at(s).adopt_counters(in.get<SwitchCounters>());
      if (net.is_rdma_nic(s)) net.rdma_nic(s).adopt_counters(in.get<NicCounters>());
    }
    for (MessageId id = 0; id < kept; ++id) {
      Message& m = messages[id];
      if (owner(NodeRef::host(m.src)) == r) {
        m.posted = in.get<Time>();
        m.finished = in.get<Time>();
      }
      if (owner(NodeRef::host(m.dst)) == r) m.delivered = in.get<Time>();
    }
  });
  {
    std::vector<std::int64_t> v{static_cast<std::int64_t>(messages.created() - kept)};
    group.all_sum(v);
    created_total_ = kept + static_cast<std::uint64_t>(v[0]);
  }
  if (replay_) {
    replay_->pool(group, [&](int rank) { return owner(NodeRef::host(replay_->host_of(rank))); });
  }
  message_log_->pool_finished(kept, &group);
}

std::uint64_t ScenarioRun::messages_created() const {
  return created_total_ > 0 ? created_total_ : network_->messages().created();
}

std::size_t ScenarioRun::local_messages_finished() const {
  std::size_t n = 0;
  for (HostId h = 0; h < network_->host_count(); ++h) n += network_->nic(h).counters().messages_finished;
  return n;
}

std::size_t ScenarioRun::messages_finished() const {
  if (flow_model_) return flow_model_->flows_finished();
  std::size_t n = 0;
  for (HostId h = 0; h < network_->host_count(); ++h) n += network_->nic(h).counters().messages_finished;
  return n;
}

bool ScenarioRun::complete() const {
  if (replay_ && !replay_->done()) return false;
  for (const auto& job : jobs_) {
    for (const CollectiveRow& row : job->rows()) {
      if (row.time < 0) return false;
    }
    if (job->rows().size() != job->config().sizes.size()) return false;
  }
  if (collective_) {
    for (const CollectiveRow& row : collective_->rows()) {
      if (row.time < 0) return false;
    }
    if (collective_->rows().size() != collective_->config().sizes.size()) return false;
  }
  return messages_finished() == messages_created();
}

}  // namespace fabricsim
