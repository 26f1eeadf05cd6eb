// A training step's trace, read, imported from Chakra or generated, with its
// stragglers, replayed rank by rank (workloads/traces/trace_replay.h).
#include <cmath>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "app/config/config_error.h"
#include "app/config/model_files.h"
#include "app/config/workload_config.h"
#include "app/config/yaml_reader.h"
#include "app/workload/trace_ahead.h"
#include "app/workload/trace_tuning.h"
#include "app/workload/tuner_facts.h"
#include "app/workload/workload_kind.h"
#include "sim/core/rng.h"
#include "topologies/partition.h"
#include "workloads/collectives/collective_algorithms.h"
#include "workloads/traces/chakra/chakra_import.h"
#include "workloads/traces/trace.h"
#include "workloads/traces/trace_replay.h"
#include "workloads/traces/transformer_trace.h"

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

// A trace's step generated before the run, as `fabricsim workload gen` makes it.
void read_generated_step(MapReader& m, TraceWorkloadConfig& t) {
  if (m.has("file")) m.context().fail(m.node()["file"], m.child_path("file"), "expected either file or generate, not both");
  MapReader g = m.map("generate");
  t.generate = true;
  t.file_source = m.context().source(m.node()["generate"], m.child_path("generate"));
  t.model_file = resolve_config_path(g.context(), g.string("model"));
  t.model_source = g.context().source(g.node()["model"], g.child_path("model"));
  t.gpu_file = resolve_config_path(g.context(), g.string("gpu"));
  t.gpu_source = g.context().source(g.node()["gpu"], g.child_path("gpu"));
  t.tp = static_cast<int>(g.integer("tp", 1, 1 << 16, 1));
  t.pp = static_cast<int>(g.integer("pp", 1, 1 << 16, 1));
  t.dp = static_cast<int>(g.integer("dp", 1, 1 << 20, 1));
  t.ep = static_cast<int>(g.integer("ep", 1, 1 << 16, 1));
  t.microbatches = static_cast<int>(g.integer("microbatches", 1, 1 << 16, 1));
  t.bucket_bytes = g.bytes("bucket", 1, INT64_C(1) << 40, t.bucket_bytes);
  t.zero = g.boolean("zero", false);
  t.recompute = g.boolean("recompute", t.recompute);
  t.overlap_dp = g.boolean("dp_overlap", t.overlap_dp);
  g.finish();
}

// Chakra's rank count and process groups (`pg_name` -> member ranks).
void read_chakra_ranks(MapReader& m, TraceWorkloadConfig& t) {
  t.chakra = true;
  t.chakra_ranks = static_cast<int>(m.integer("ranks", 1, 1 << 20));
  MapReader groups = m.map("process_groups", false);
  if (m.has("process_groups")) {
    for (const auto& item : m.node()["process_groups"]) {
      const std::string name = item.first.as<std::string>();
      std::vector<int> ranks;
      for (std::int64_t r : groups.integer_list(name, 0, t.chakra_ranks - 1, true)) ranks.push_back(static_cast<int>(r));
      if (ranks.empty()) m.context().fail(item.second, groups.child_path(name), "expected at least one rank");
      t.process_groups[name] = std::move(ranks);
    }
  }
  groups.finish();
}

// What both replay: the network, the algorithm NCCL would run, and the stragglers.
void read_replay(MapReader& m, TraceWorkloadConfig& t) {
  t.ideal_network = m.choice<bool>("network", {{"packet", false}, {"ideal", true}}, false);
  std::vector<std::pair<std::string, std::string>> algorithms{{"auto", "auto"}};
  for (const auto& name : algorithm_names()) algorithms.emplace_back(name, name);
  t.algorithm = m.choice<std::string>("algorithm", algorithms, std::string("ring"));
  t.protocol = m.choice<std::string>("protocol", {{"none", "none"}, {"auto", "auto"}, {"simple", "simple"}, {"ll", "ll"}, {"ll128", "ll128"}},
                                     t.protocol);
  // A named protocol must be one the named algorithm runs (as `collective` refuses it).
  if (const CollectiveAlgorithm* a = find_collective_algorithm(t.algorithm); a != nullptr && t.protocol != "none" && t.protocol != "auto") {
    if (a->protocols == ProtocolSupport::kNone) {
      m.context().fail(m.node()["protocol"], m.child_path("protocol"),
                       "protocol " + t.protocol + " is modelled for the ring and the tree (and NVLS, Simple only); algorithm " +
                           t.algorithm + " takes none or auto");
    }
    if (a->protocols == ProtocolSupport::kSimpleOnly && t.protocol != "simple") {
      m.context().fail(m.node()["protocol"], m.child_path("protocol"), "expected simple: " + t.algorithm + " runs NCCL's Simple protocol only");
    }
  }
  if (m.has("channels")) t.channels = static_cast<int>(m.integer("channels", 1, 64));
  t.stragglers = read_stragglers(m, m.sequence("stragglers", false));
}

void read_trace_file(MapReader& m, TraceWorkloadConfig& t, const char* key) {
  t.file = m.string(key);
  t.file_source = m.context().source(m.node()[key], m.child_path(key));
}

}  // namespace

PreparedTrace generate_trace(const TraceWorkloadConfig& t, const RoutingProgress& progress) {
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
  par.recompute = t.recompute;
  par.overlap_dp = t.overlap_dp;
  PreparedTrace out;
  out.trace = generate_transformer_trace(model, par, gpu, progress, [&out](Trace& made) { out.program.take_rank(made); });
  return out;
}

void read_trace_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading&) {
  read_placement(m, w);
  if (m.has("generate")) {
    read_generated_step(m, w.trace);
  } else {
    read_trace_file(m, w.trace, "file");
  }
  read_replay(m, w.trace);
}

void read_chakra_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading&) {
  read_placement(m, w);
  read_trace_file(m, w.trace, "prefix");
  read_chakra_ranks(m, w.trace);
  read_replay(m, w.trace);
}

WorkloadStart make_trace_workload(const WorkloadSetup& s) {
  const ScenarioConfig& config = s.config;
  const WorkloadConfig& w = config.workload;
  const auto endpoints = static_cast<std::uint32_t>(s.topology.host_count());
  const std::string path = resolve_config_path(config.file, w.trace.file);
  // A generated step comes taken into the replay's program already; a read one whole.
  std::optional<PreparedTrace> prepared;
  Trace read;
  try {
    if (s.generated_trace) {
      prepared = s.generated_trace();
    } else if (w.trace.generate) {
      prepared = generate_trace(w.trace, s.trace_progress);
    } else {
      read = w.trace.chakra ? import_chakra(path, w.trace.chakra_ranks, w.trace.process_groups) : read_trace(path);
    }
    const int ranks = prepared ? prepared->trace.ranks : read.ranks;
    if (ranks > static_cast<int>(endpoints)) {
      throw std::invalid_argument("the trace has " + std::to_string(ranks) + " ranks, the fabric " + std::to_string(endpoints) + " endpoints");
    }
  } catch (const std::exception& e) {
    throw ConfigError(w.trace.file_source.where, w.trace.file_source.path, e.what());
  }
  const Trace& trace = prepared ? prepared->trace : read;
  std::vector<HostId> hosts = s.placement;
  if (hosts.empty()) {
    for (int r = 0; r < trace.ranks; ++r) hosts.push_back(static_cast<HostId>(r));
  } else if (static_cast<int>(hosts.size()) != trace.ranks) {
    throw ConfigError(w.placement_sources.front().where, "workload.placement",
                      "expected " + std::to_string(trace.ranks) + " endpoints (one per rank of the trace), got " + std::to_string(hosts.size()));
  }
  ReplayOptions options;
  options.ideal_network = w.trace.ideal_network;
  options.generated = w.trace.generate;
  options.coupled_rings = config.network.flow_rings == NetworkConfig::FlowRings::kCoupled  ? CoupledRings::kEvery
                          : config.network.flow_rings == NetworkConfig::FlowRings::kInNode ? CoupledRings::kInNode
                                                                                             : CoupledRings::kNone;
  options.default_algorithm = w.trace.algorithm;
  if (s.network.partition_count() > 1 && w.trace.algorithm == "auto" && w.trace.protocol != "none" &&
      tuner_facts(config.topology, 2).sharp && config.network.fidelity == NetworkConfig::Fidelity::kPacket) {
    // NCCL's choice may be CollNet there, whose sums a split run does not run; choosing
    // otherwise would make the split run's results differ from the serial run's.
    throw ConfigError(config.file, "workload.algorithm",
                      "on a fabric with SHARP, auto may choose collnet for a trace's collectives, whose sums are opened by "
                      "whichever member contributes first, which a split run does not fix; expected another algorithm with "
                      "--threads or mpirun");
  }
  options.tune = trace_tuner(config);
  options.model = trace_model_description(config);
  if (config.topology.kind == TopologyConfig::Kind::kNvSwitch) {
    options.nvls_latency_ps = config.topology.nvswitch.nvls_latency;
    options.params.nvls_stage_bytes_per_second = static_cast<double>(config.topology.nvswitch.nvls_bandwidth.bits_per_second) / 8;
    options.params.nvls_fill_rounds = config.topology.nvswitch.nvls_fill_rounds;
    options.params.nvls_head_cost_ps = config.topology.nvswitch.nvls_head_cost;
  }
  if (config.topology.kind == TopologyConfig::Kind::kCluster) {
    options.nvls_latency_ps = config.topology.cluster.node.nvls_latency;
    options.params.nvls_stage_bytes_per_second = static_cast<double>(config.topology.cluster.node.nvls_bandwidth.bits_per_second) / 8;
    options.params.nvls_fill_rounds = config.topology.cluster.node.nvls_fill_rounds;
    options.params.nvls_head_cost_ps = config.topology.cluster.node.nvls_head_cost;
    const auto gpus = static_cast<std::uint32_t>(std::max(1, config.topology.cluster.node.gpus));
    for (std::uint32_t h = 0; h < s.topology.host_count(); ++h) options.host_node.push_back(h / gpus);
  }
  options.params.channels = std::max(1, w.trace.channels);
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
  options.params.local_size = config.topology.kind == TopologyConfig::Kind::kCluster ? config.topology.cluster.node.gpus : trace.ranks;
  options.params.one_node = config.topology.kind == TopologyConfig::Kind::kNvSwitch;
  {
    const std::vector<std::uint32_t> unit = node_units(s.topology);
    for (std::uint32_t h = 0; h < s.topology.host_count(); ++h) options.host_unit.push_back(unit[s.topology.host_node(h)]);
  }
  options.collective.traffic_class = static_cast<std::uint8_t>(w.traffic_class);
  WorkloadStart start;
  try {
    start.driver = prepared ? std::make_unique<TraceReplay>(s.network, std::move(*prepared), std::move(hosts), options)
                            : std::make_unique<TraceReplay>(s.network, std::move(read), std::move(hosts), options);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(w.trace.file_source.where, w.trace.file_source.path, e.what());
  }
  return start;
}

WorkloadNeeds trace_needs(const ScenarioConfig& config, const Topology& t) {
  WorkloadNeeds needs;
  const WorkloadConfig& w = config.workload;
  const std::uint64_t hosts = t.host_count();
  const std::filesystem::path path = resolve_config_path(config.file, w.trace.file);
  std::error_code ec;
  if (w.trace.generate) {
    // A generated step: per rank, per micro-batch and layer of its stage, forward and
    // backward compute (and four TP AllReduces with TP), its PP sends and receives, a
    // DP bucket per layer or so; 32 bytes per operation (its replay state, group and key
    // or peer and tag): its other fields are its program's and each rank's dependencies
    // are turned round into children as it is made, both kept once per shape (shared by
    // the ranks of a pipeline stage). docs/model.md's scale table has the measured peaks.
    const std::int64_t ranks = static_cast<std::int64_t>(w.trace.tp) * w.trace.pp * w.trace.dp;
    std::int64_t layers = 96;
    try {
      layers = load_model_file(w.trace.model_file).layers;
    } catch (const std::exception&) {
      // reported where the run reads it
    }
    const std::int64_t per_rank = w.trace.microbatches * (layers / w.trace.pp + 1) * (w.trace.tp > 1 ? 8 : 4) +
                                  4 * w.trace.microbatches + layers / w.trace.pp + 4;
    needs.message_bytes += ranks * per_rank * 32;
  } else {
    const auto size = std::filesystem::file_size(path, ec);
    // Parsed operations, their states and indices: 3.5 bytes per byte of JSON Lines
    // (the Llama-70B step's 24 MB trace: 95 MB peak for the whole run; 5 bytes put the
    // estimate 41% over); Chakra's binary protobuf is denser, still 5.
    needs.message_bytes += ec ? 0 : (w.trace.chakra ? 5 * size : size * 7 / 2);
  }
  needs.packets += hosts * 64;  // a few messages per rank at once
  return needs;
}

}  // namespace fabricsim
