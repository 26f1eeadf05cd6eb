// ScenarioRun, before the first event: the topology and its faults, the memory check,
// the compiled network (split over partitions where asked), the messages and workload,
// and what watches the run (deadlock check, queue sampler, the split run's engine).
#include "app/scenario/scenario.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "app/config/config_error.h"
#include "app/scenario/huge_pages.h"
#include "app/scenario/setup_threads.h"
#include "app/workload/tuner_facts.h"
#include "sim/parallel/process_group.h"
#include "topologies/analysis.h"
#include "topologies/cluster.h"
#include "topologies/compile.h"
#include "topologies/faults.h"
#include "topologies/partition.h"
#include "workloads/collectives/collective_algorithms.h"

namespace fabricsim {

namespace {

// The compiled network's parameters, from the config.
NetworkOptions network_options(const ScenarioConfig& config, const Topology& topology) {
  const NetworkConfig& n = config.network;
  NetworkOptions options;
  options.params.traffic_classes = n.traffic_classes;
  options.params.load_balancing = n.load_balancing;
  options.params.salt_seed = config.seed;
  options.params.nic = n.nic;
  // A gap means loss only where paths deliver in order: switches pin flows (ECMP) and no
  // endpoint spreads a message over several links (a GPU's NVLink trunks do).
  bool multi_port_endpoint = false;
  {
    std::vector<int> links(topology.host_count(), 0);
    for (const TopologyLink& l : topology.links()) {
      for (std::uint32_t end : {l.a, l.b}) {
        if (topology.node(end).kind == NodeKind::kHost && ++links[topology.node(end).kind_index] > 1) multi_port_endpoint = true;
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
  if (lossless.congestion_control) {
    options.params.nic.network_rtt = largest_base_rtt(topology, std::int64_t{n.nic.mtu} + n.nic.header_bytes, n.nic.ack_bytes);
  }
  options.dateline = lossless.dateline;
  // A flow-level run has no endpoints' transport to place: its NICs stay links' ends.
  options.rdma_nics = config.topology.kind == TopologyConfig::Kind::kCluster && config.topology.cluster.rdma_nics &&
                      n.fidelity == NetworkConfig::Fidelity::kPacket;
  return options;
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

ScenarioRun::ScenarioRun(ScenarioConfig config, const RoutingProgress& routing_progress, const RoutingProgress& trace_progress,
                         const SetupNote& setup_note)
    : config_(std::move(config)) {
  const auto setup_start = std::chrono::steady_clock::now();
  topology_ = build_topology(config_.topology);
  apply_config_faults();
  refuse_if_too_big();
  const unsigned cores = usable_cores();
  threads_asked_ = config_.threads > 0;
  // A large packet-level run splits itself over the cores unasked: the same results, sooner.
  config_.threads = split_threads(config_, topology_.host_count(), longest_link_latency(topology_), splits_unasked(), cores);
  setup_threads_ = fabricsim::setup_threads(config_, memory_, cores);
  // A large flow-level run's state onto huge pages as it is built: its operations and flows
  // are read in no order (docs/performance.md). Not a packet-level run's: its pools and
  // queues take many small blocks, which whole committed segments would inflate, and the
  // passes that collapse dense ranges serve it.
  if (config_.network.fidelity == NetworkConfig::Fidelity::kFlow && memory_.total() >= kHugePageHeap) {
    allocate_heap_on_huge_pages();
  }
  // A generated step needs only the config: with threads, made while the fabric is routed.
  const WorkloadConfig& w = config_.workload;
  if (setup_threads_ > 1 && w.is("trace") && w.trace.generate) trace_ahead_ = std::make_unique<TraceAhead>(w.trace, trace_progress);
  build_network(network_options(config_, topology_), routing_progress);
  add_traffic(trace_progress, setup_note);
  start_watchers();
  setup_wall_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();
}

void ScenarioRun::apply_config_faults() {
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
}

void ScenarioRun::refuse_if_too_big() {
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
    // Rings at flow fidelity step by step grow with ranks squared; coupled, with ranks.
    std::string instead;
    if (config_.network.fidelity == NetworkConfig::Fidelity::kFlow &&
        config_.network.flow_rings != NetworkConfig::FlowRings::kCoupled) {
      ScenarioConfig coupled = config_;
      coupled.network.flow_rings = NetworkConfig::FlowRings::kCoupled;
      const MemoryEstimate other = estimate_memory(coupled, topology_);
      if (other.total() <= limit) {
        instead = " (with network.flow_rings: coupled, a ring as one flow per channel, about " + gib(other.total()) + ")";
      }
    }
    throw ConfigError(config_.topology.source.where, config_.topology.source.path,
                      "this run needs about " + memory_.describe() + ", more than the " + gib(limit) +
                          (config_.memory_limit > 0 ? " of --memory-limit" : " this machine has free") +
                          "; expected a smaller fabric or workload" + instead);
  }
}

void ScenarioRun::build_network(NetworkOptions options, const RoutingProgress& routing_progress) {
  const NetworkConfig& n = config_.network;
  sim_ = std::make_unique<Simulator>(config_.seed);
  sim_->packets().set_chunk_advice(advise_huge_pages);
  sim_->slot_blocks().set_chunk_advice(advise_huge_pages);
  const int processes = config_.processes != nullptr ? config_.processes->size() : 1;
  // A flow-level run is one solver: its threads split the set-up alone (the routes, a
  // generated trace, the replay's ranks) and copy pages aside (HugePageKeeper).
  const bool flow = n.fidelity == NetworkConfig::Fidelity::kFlow;
  options.route_threads = setup_threads_;
  if ((config_.threads > 0 && !flow) || processes > 1) {
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
    // A GPU's links to its NVSwitch chips as one constraint each way (flows split over
    // them by bandwidth): a quarter of the hops inside a DGX H100.
    flow_model_->set_link_bundles(flow_router_->parallel_link_groups());
    flow_model_->set_order(network_->next_order_key());
    flow_model_->set_rate_interval(n.flow_rate_interval);
    network_->set_flow_model(flow_model_.get(), flow_router_.get());
  }
}

void ScenarioRun::add_traffic(const RoutingProgress& trace_progress, const SetupNote& setup_note) {
  fault_timeline_ = FaultTimeline::prepare(config_, topology_, *network_, applied_faults_);
  if (fault_timeline_) fault_timeline_->start(*sim_);
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
  add_workload(trace_progress, setup_note);
  for (auto& s : schedules_) {
    if (s) s->arm();
  }
  // Messages made before the run keep their slots for the results; later ones (a
  // collective's, a trace's) reuse finished slots, so memory follows what is in flight.
  network_->messages().set_recycle_from(static_cast<MessageId>(network_->messages().size()));
}

void ScenarioRun::start_watchers() {
  const NetworkConfig& n = config_.network;
  const LosslessConfig& lossless = n.lossless;
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
    // A split it chose itself, not one asked for: one thread takes over where the split loses.
    engine_->set_gather_when_waiting(!threads_asked_);
    if (config_.processes != nullptr) {
      // Messages finished anywhere, for progress; records are written once the processes
      // have pooled them (they finish at other processes than deliver).
      engine_->set_window_sum([this] { return static_cast<std::int64_t>(local_messages_finished()); });
      message_log_->defer_to_end();
      if (detector_) detector_->set_process_group(config_.processes);
      // Messages made from here on to another process's endpoints go by notice (those
      // made before the run are in every process's table alike).
      network_->open_receives_by_notice();
      if (!drivers_.empty()) {
        engine_->set_window_hook([this, group = config_.processes] {
          for (auto& driver : drivers_) driver->between_windows(group);
        });
      }
    } else {
      // Between windows the partitions' message records are merged into the stream, and
      // a collective's end is seen (its ranks finish on several threads).
      engine_->set_window_hook([this] {
        message_log_->flush();
        for (auto& driver : drivers_) driver->between_windows(nullptr);
      });
    }
  }
}

std::optional<ConfigError> ScenarioRun::split_refusal() const {
  const WorkloadConfig& w = config_.workload;
  if (config_.network.fidelity == NetworkConfig::Fidelity::kFlow) {
    return ConfigError(config_.file, "network.fidelity",
                       "a flow-level run is one solver over the whole fabric and runs in one process: expected no mpirun "
                       "with fidelity flow (--threads splits its set-up only)");
  }
  // Several jobs are collectives too: each is held to the same rules.
  std::vector<std::pair<const CollectiveConfig*, std::string>> collectives;
  if (w.is("collective")) collectives.emplace_back(&w.collective, "workload");
  for (const JobConfig& job : config_.jobs) collectives.emplace_back(&job.workload.collective, job.source.path + ".workload");
  if ((w.is("trace") || w.is("chakra")) && w.trace.ideal_network) {
    return ConfigError(config_.file, "workload.network",
                       "an ideal network hands data from rank to rank in no time, across partitions: expected no "
                       "--threads (or mpirun) with network: ideal");
  }
  for (const auto& [c, key] : collectives) {
    if (c->check_data && config_.processes != nullptr) {
      return ConfigError(config_.file, key + ".check_data",
                         "data checking follows every rank's data in one verifier, in one process's memory: expected "
                         "check_data: false under mpirun (--threads checks data)");
    }
  }
  if (config_.stop.events < static_cast<std::uint64_t>(INT64_MAX)) {  // the default is no limit
    return ConfigError(config_.file, "stop.events",
                       "an event limit has no meaning that is the same for every split; expected stop.time with --threads or mpirun");
  }
  return std::nullopt;
}

void ScenarioRun::check_splittable() const {
  if (std::optional<ConfigError> refusal = split_refusal()) throw *refusal;
}

bool ScenarioRun::splits_unasked() const {
  if (split_refusal()) return false;
  // SHARP's sums (collnet, which NCCL's choice may take) are refused in a split run.
  if (tuner_facts(config_.topology, 1).sharp) return false;
  const WorkloadConfig& w = config_.workload;
  const auto packet_only = [](const std::string& algorithm) {
    const CollectiveAlgorithm* a = find_collective_algorithm(algorithm);
    return a != nullptr && a->packet_only;
  };
  if (w.is("collective") && packet_only(w.collective.algorithm)) return false;
  for (const JobConfig& job : config_.jobs) {
    if (job.workload.is("collective") && packet_only(job.workload.collective.algorithm)) return false;
  }
  return true;
}

}  // namespace fabricsim
