// ScenarioRun's workloads: traffic patterns, a collective sweep, jobs side by side, a
// training trace (read, imported or generated) with its stragglers, and placement.
#include "app/scenario/scenario.h"

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "app/config/config_error.h"
#include "app/config/model_files.h"
#include "app/workload/tuner_facts.h"
#include "sim/core/rng.h"
#include "topologies/analysis.h"
#include "topologies/partition.h"
#include "workloads/traces/chakra/chakra_import.h"
#include "workloads/traces/trace.h"
#include "workloads/traces/transformer_trace.h"
#include "workloads/traffic/flow_size_cdf.h"
#include "workloads/traffic/synthetic_traffic.h"

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
    case K::kChakra: start_trace(trace_progress); break;
    case K::kNone: break;
  }
  for (const Flow& f : flows) {
    const MessageId id = network_->add_message(f.src, f.dst, f.bytes, static_cast<std::uint8_t>(w.traffic_class));
    schedule_message(f.start, id);
    starts_.push_back(f.start);
  }
}

void ScenarioRun::start_trace(const RoutingProgress& trace_progress) {
  const WorkloadConfig& w = config_.workload;
  const auto endpoints = static_cast<std::uint32_t>(topology_.host_count());
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

}  // namespace fabricsim
