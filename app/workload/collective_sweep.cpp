#include "app/workload/collective_sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "app/config/config_error.h"
#include "app/workload/custom_steps.h"
#include "app/validation/coverage.h"
#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/collective_data.h"
#include "workloads/collectives/msccl_xml.h"
#include "workloads/collectives/nccl_costs.h"
#include "workloads/collectives/program_builder.h"

namespace fabricsim {

CollectiveSweep::CollectiveSweep(Network& network, const Topology& topology, const ScenarioConfig& config, std::vector<HostId> placement,
                                 const SetupNote& note)
    : network_(&network),
      config_(config.workload.collective),
      traffic_class_(static_cast<std::uint8_t>(config.workload.traffic_class)) {
  notice_ = network.longest_latency();
  const auto endpoints = static_cast<int>(topology.host_count());
  ranks_ = config_.ranks == 0 ? endpoints : config_.ranks;
  const std::string where = config.file;
  if (ranks_ > endpoints) {
    throw ConfigError(where, "workload.ranks", "expected at most " + std::to_string(endpoints) + " ranks (the endpoints)");
  }
  if (config_.root >= ranks_) {
    throw ConfigError(where, "workload.root", "expected a rank below " + std::to_string(ranks_) + " (the collective's ranks), got " +
                                                 std::to_string(config_.root));
  }
  hosts_ = std::move(placement);
  for (int r = static_cast<int>(hosts_.size()); r < ranks_; ++r) hosts_.push_back(static_cast<HostId>(r));
  local_size_ = config_.local_size > 0 ? config_.local_size
                : config.topology.kind == TopologyConfig::Kind::kCluster ? config.topology.cluster.node.gpus
                                                                        : ranks_;
  tuner_facts_ = tuner_facts_for_group(config.topology, hosts_);
  if (config.topology.kind == TopologyConfig::Kind::kCluster) {
    const auto gpus = static_cast<HostId>(std::max(1, config.topology.cluster.node.gpus));
    for (HostId h : hosts_) rank_node_.push_back(h / gpus);
  }
  // Where the ranks sit, not how many there are: 8 ranks placed over two nodes are not one node.
  one_node_ = config.topology.kind == TopologyConfig::Kind::kNvSwitch ||
              (config.topology.kind == TopologyConfig::Kind::kCluster && tuner_facts_.nodes == 1);
  apply_nccl_settings(tuner_facts_, config.network);
  validation_gaps_ = coverage_gaps(config.topology, ranks_, validation_corpus(), op_name(config_.op));
  if (config.network.fidelity == NetworkConfig::Fidelity::kFlow) {
    flow_rings_ = config.network.flow_rings;
    // Flows carry NVLS's sums and copies through the first switch, not SHARP's through
    // the fabric: auto leaves CollNet out, and asking for it is refused.
    tuner_facts_.sharp = false;
    if (const CollectiveAlgorithm* a = find_collective_algorithm(config_.algorithm); a != nullptr && a->packet_only) {
      throw ConfigError(where, "workload.algorithm",
                        "collnet (SHARP sums in the fabric's switches) is modelled at packet fidelity only; expected "
                        "another algorithm with network.fidelity: flow");
    }
  }
  // A protocol is NCCL's (NVLS runs Simple): other algorithms move the network's bytes.
  const CollectiveAlgorithm* fixed = find_collective_algorithm(config_.algorithm);
  const bool costed = config_.algorithm == "auto" || (fixed != nullptr && fixed->protocols != ProtocolSupport::kNone);
  const bool named = config_.protocol != "none" && config_.protocol != "auto";
  if (named && !costed) {
    throw ConfigError(where, "workload.protocol",
                      "protocol " + config_.protocol + " is modelled for the ring and the tree (and NVLS, Simple only); algorithm " +
                          config_.algorithm + " takes none or auto");
  }
  if (named && config_.protocol != "simple" && fixed != nullptr && fixed->protocols == ProtocolSupport::kSimpleOnly) {
    throw ConfigError(where, "workload.protocol", config_.algorithm + " runs NCCL's Simple protocol only");
  }
  // NVLS's start-up cost is the NVSwitch domain's (a calibrated figure).
  if (config.topology.kind == TopologyConfig::Kind::kNvSwitch) nvls_latency_ = config.topology.nvswitch.nvls_latency;
  if (config.topology.kind == TopologyConfig::Kind::kCluster) nvls_latency_ = config.topology.cluster.node.nvls_latency;
  if (!config_.file.empty() && !config.file.empty() && config.file.front() != '<') {
    config_dir_ = std::filesystem::path(config.file).parent_path().string();
  }
  // Check every size's program now, so a bad algorithm fails before any event.
  const bool split = network.partition_count() > 1;
  for (std::size_t i = 0; i < config_.sizes.size(); ++i) {
    const std::int64_t bytes = config_.sizes[i];
    const CollectiveAlgorithm* chosen = find_collective_algorithm(choice_for(bytes).algorithm);
    if (split && chosen != nullptr && chosen->packet_only) {
      throw ConfigError(where, "workload.algorithm",
                        "collnet's SHARP sums are opened by whichever member contributes first, which a split run "
                        "does not fix; the algorithm at " + std::to_string(bytes) +
                            " B is collnet: expected another algorithm with --threads or mpirun");
    }
    // A coupled ring builds no program (a ring's grows with ranks squared); the ring's
    // program is right by construction.
    if (!coupled_rings_for(bytes, choice_for(bytes)).empty()) continue;
    try {
      auto since = std::chrono::steady_clock::now();
      const auto tell = [&](const std::string& what) {
        const auto now = std::chrono::steady_clock::now();
        if (note) note("collective program for " + std::to_string(bytes) + " B: " + what, std::chrono::duration<double>(now - since).count());
        since = now;
      };
      CollectiveProgram built = program_for(bytes);
      const CollectiveProgram* p = &built;
      std::size_t steps = 0;
      for (const RankProgram& r : built.programs) steps += r.steps.size();
      tell("built, " + std::to_string(built.ranks) + " ranks, " + std::to_string(steps) + " steps");
      if (i > 0 || config_.check_data) {
        if (auto problem = check_program(built, config_.check_data)) throw std::invalid_argument(*problem);
        tell(config_.check_data ? "checked with its data" : "checked");
      }
      if (i == 0) {
        // The first size runs first: checked once and prepared here, not built and
        // checked again when it starts (at 16,384 ranks a tree's program is millions of
        // steps, seconds to build and to check).
        first_prepared_ = PreparedCollective::prepare(std::move(built));
        p = &first_prepared_->program;
        tell("checked and prepared");
      }
      // In-network algorithms need switches that reduce and copy for these ranks.
      if (i == 0 && uses_in_network(*p)) {
        if (auto problem = CollectiveExecutor::in_network_problem(network, *p, hosts_)) throw ConfigError(where, "workload.algorithm", *problem);
      }
    } catch (const ConfigError&) {
      throw;  // already located in the steps file
    } catch (const std::exception& e) {
      const SourceRef& src = config_.file.empty() ? config.topology.source : config_.file_source;
      throw ConfigError(config_.file.empty() ? where : src.where, config_.file.empty() ? "workload" : src.path, e.what());
    }
  }
}

TunerChoice CollectiveSweep::choice_for(std::int64_t bytes) const {
  if (config_.algorithm == "msccl" || config_.algorithm == "steps") {
    TunerChoice c;
    c.algorithm = config_.algorithm;
    return c;
  }
  return choose_algorithm(config_.op, bytes, tuner_facts_, config_.algorithm, config_.protocol);
}

CollectiveProgram CollectiveSweep::program_for(std::int64_t bytes) const {
  if (config_.algorithm == "msccl" || config_.algorithm == "steps") {
    const std::filesystem::path path = std::filesystem::path(config_.file).is_relative() && !config_dir_.empty()
                                           ? std::filesystem::path(config_dir_) / config_.file
                                           : std::filesystem::path(config_.file);
    CollectiveProgram p = config_.algorithm == "msccl" ? load_msccl_xml(path.string(), bytes) : load_custom_steps(path.string(), bytes);
    if (p.ranks != ranks_) {
      throw std::invalid_argument("the algorithm is for " + std::to_string(p.ranks) + " ranks, the workload has " + std::to_string(ranks_));
    }
    if (p.op != config_.op) throw std::invalid_argument(std::string("the algorithm does ") + op_name(p.op) + ", the workload asks for " + op_name(config_.op));
    return p;
  }
  const TunerChoice choice = choice_for(bytes);
  AlgorithmParams params;
  // The config's channels, else NCCL's for what it chose (one ring or tree on the ideal network).
  params.channels = config_.channels > 0 ? config_.channels : std::max(1, choice.nccl_channels);
  params.chunk_bytes = chunk_bytes_for(choice, bytes);
  params.root = config_.root;
  params.local_size = local_size_;
  params.one_node = one_node_;
  if (choice.p2p) params.p2p_channels = choice.p2p->p2p_channels;
  const CollectiveAlgorithm* algorithm = find_collective_algorithm(choice.algorithm);
  if (algorithm != nullptr && algorithm->nvls_start) {
    params.start_latency_ps = nvls_latency_;
    params.nvls_stage_bytes_per_second = tuner_facts_.nvls_GBps * 1e9;
    params.nvls_fill_rounds = tuner_facts_.nvls_fill_rounds;
    params.nvls_head_cost_ps = std::llround(tuner_facts_.nvls_head_cost_us * 1e6);
  }
  CollectiveProgram p = build_collective(choice.algorithm, config_.op, ranks_, bytes, params);
  if (choice.protocol != NcclProtocol::kNone) apply_nccl_costs(p, nccl_costs(choice, tuner_facts_, config_.op, bytes, config_.channels));
  return p;
}

std::int64_t CollectiveSweep::chunk_bytes_for(const TunerChoice& choice, std::int64_t bytes) const {
  if (config_.chunk_bytes > 0) return config_.chunk_bytes;
  const int channels = config_.channels > 0 ? config_.channels : choice.nccl_channels;
  return nccl_chunk_bytes(choice, config_.op, bytes, channels, tuner_facts_);
}

std::string CollectiveSweep::model_description() const { return fabricsim::model_description(config_.protocol, tuner_facts_); }

bool CollectiveSweep::done() const {
  for (const CollectiveRow& row : rows_) {
    if (row.time < 0) return false;
  }
  return rows_.size() == config_.sizes.size();
}

void CollectiveSweep::begin_at(Time at, bool split) {
  split_ = split;
  start_next(at);
}

void CollectiveSweep::poll(ProcessGroup* group) {
  if (!current_) return;
  if (group == nullptr) {
    if (!current_->done()) return;
    current_->check_data_at_end();
    start_next(current_->finished_at() + notice_);
    return;
  }
  // Each process has seen its own ranks finish: the size is over when every rank is.
  std::vector<std::int64_t> done{current_->ranks_done()};
  group->all_sum(done);
  if (done[0] < current_->ranks_with_steps()) return;
  std::vector<std::int64_t> last{-current_->local_finished()};
  group->all_min(last);
  current_->set_finished_at(-last[0]);
  start_next(-last[0] + notice_);
}

void CollectiveSweep::start_next(Time at) {
  if (current_ || ring_) {
    CollectiveRow& row = rows_.back();
    row.time = current_ ? current_->finished_at() - current_->started_at() : ring_finished_ - ring_started_;
    const double seconds = to_seconds(row.time);
    row.algbw_GBps = seconds > 0 ? static_cast<double>(row.size_bytes) / seconds * 1e-9 : 0;
    row.busbw_GBps = row.algbw_GBps * busbw_factor(config_.op, ranks_);
    row.data_check = !config_.check_data ? "off" : current_->data_error() ? *current_->data_error() : "passed";
  }
  if (ring_) {
    finished_rings_.push_back(std::move(ring_));
    finished_rings_.erase(std::remove_if(finished_rings_.begin(), finished_rings_.end() - 1, [](const auto& r) { return r->idle(); }),
                          finished_rings_.end() - 1);
  }
  if (current_) {
    finished_.push_back(std::move(current_));
    // Earlier sizes whose messages are all acknowledged are not called again: free them
    // (each holds its program and per-step state, 1.6 MB for a ring over 16 ranks and 8
    // channels; a sweep of eleven sizes peaked at 29 MB against 12.7 MB for its largest
    // alone). Not the one just finished: this may be its own callback.
    finished_.erase(std::remove_if(finished_.begin(), finished_.end() - 1, [](const auto& e) { return e->quiescent(); }),
                    finished_.end() - 1);
  }
  if (next_ >= config_.sizes.size()) return;
  const std::int64_t bytes = config_.sizes[next_++];
  const TunerChoice choice = choice_for(bytes);
  CollectiveRow& row = rows_.emplace_back();
  row.size_bytes = bytes;
  row.data_check = "not finished";
  row.algorithm = choice.algorithm;
  row.protocol = protocol_name(choice.protocol);
  row.nccl_model_us = choice.nccl_time_us;
  if (nccl_model()) {
    row.error_band = error_band(built_in_corpus_errors(), nccl_algo_name(choice.algorithm), row.protocol, bytes,
                                tuner_facts_.nodes, {}, op_name(config_.op));
  }
  if (std::vector<CoupledRing::Ring> rings = coupled_rings_for(bytes, choice); !rings.empty()) {
    start_coupled(std::move(rings), choice, at);
    return;
  }
  CollectiveOptions options;
  options.reduce_bytes_per_second = config_.reduce_bytes_per_second;
  options.check_data = config_.check_data;
  options.traffic_class = traffic_class_;
  options.activity = activity_;
  options.rank_node = rank_node_;
  current_ = first_prepared_ ? std::make_unique<CollectiveExecutor>(*network_, std::move(first_prepared_), hosts_, options)
                            : std::make_unique<CollectiveExecutor>(*network_, program_for(bytes), hosts_, options);
  current_->set_on_done([this] { start_next(current_->finished_at() + notice_); }, split_);
  current_->start_at(at);
}

std::vector<CoupledRing::Ring> CollectiveSweep::coupled_rings_for(std::int64_t bytes, const TunerChoice& choice) const {
  using FlowRings = NetworkConfig::FlowRings;
  if (flow_rings_ == FlowRings::kSteps || choice.algorithm != "ring") return {};
  if (config_.check_data || config_.reduce_bytes_per_second > 0 || activity_ != nullptr) return {};
  if (flow_rings_ == FlowRings::kInNode && std::any_of(rank_node_.begin(), rank_node_.end(), [&](std::uint32_t n) { return n != rank_node_.front(); })) {
    return {};
  }
  AlgorithmParams params;
  params.channels = config_.channels > 0 ? config_.channels : std::max(1, choice.nccl_channels);
  params.root = config_.root;
  params.local_size = local_size_;
  params.one_node = one_node_;
  params.chunk_bytes = chunk_bytes_for(choice, bytes);  // NCCL's pipeline's pieces
  std::vector<CoupledRing::Ring> rings = CoupledRing::rings_for(config_.op, ranks_, bytes, params);
  if (!rings.empty() && !coupled_ring_fits(rings, coupled_costs(rings, choice))) return {};
  return rings;
}

CoupledRing::Costs CollectiveSweep::coupled_costs(const std::vector<CoupledRing::Ring>& rank_rings, const TunerChoice& choice) const {
  // NCCL's costs as the step-by-step ring's program carries them.
  return choice.protocol != NcclProtocol::kNone ? coupled_ring_costs(nccl_costs(choice, tuner_facts_, config_.op), rank_rings, rank_node_)
                                                : CoupledRing::Costs{};
}

void CollectiveSweep::start_coupled(std::vector<CoupledRing::Ring> rank_rings, const TunerChoice& choice, Time at) {
  const CoupledRing::Costs costs = coupled_costs(rank_rings, choice);
  const std::uint16_t shares = CoupledRing::fold_equal(rank_rings);  // as a trace's replay runs them
  ring_ = std::make_unique<CoupledRing>(*network_, CoupledRing::on_hosts(rank_rings, hosts_), shares, traffic_class_, [this](Time now) {
    ring_finished_ = now;
    start_next(now + notice_);
  });
  ring_->set_costs(costs);
  ring_started_ = at;
  ring_->start_at(at);
}

}  // namespace fabricsim
