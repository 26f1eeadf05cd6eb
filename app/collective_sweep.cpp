#include "app/collective_sweep.h"

#include <filesystem>
#include <stdexcept>

#include "app/config_error.h"
#include "app/custom_steps.h"
#include "workloads/collective_algorithms.h"
#include "workloads/collective_data.h"
#include "workloads/msccl_xml.h"

namespace fabricsim {

CollectiveSweep::CollectiveSweep(Network& network, const Topology& topology, const ScenarioConfig& config, std::vector<HostId> placement)
    : network_(&network),
      config_(config.workload.collective),
      traffic_class_(static_cast<std::uint8_t>(config.workload.traffic_class)) {
  const auto endpoints = static_cast<int>(topology.host_count());
  ranks_ = config_.ranks == 0 ? endpoints : config_.ranks;
  const std::string where = config.file;
  if (ranks_ > endpoints) {
    throw ConfigError(where, "workload.ranks", "expected at most " + std::to_string(endpoints) + " ranks (the endpoints)");
  }
  hosts_ = std::move(placement);
  for (int r = static_cast<int>(hosts_.size()); r < ranks_; ++r) hosts_.push_back(static_cast<HostId>(r));
  local_size_ = config_.local_size > 0 ? config_.local_size
                : config.topology.kind == TopologyConfig::Kind::kCluster ? config.topology.cluster.node.gpus
                                                                        : ranks_;
  tuner_facts_ = tuner_facts(config.topology, ranks_);
  // NVLS's start-up cost is the NVSwitch domain's (a calibrated figure).
  if (config.topology.kind == TopologyConfig::Kind::kNvSwitch) nvls_latency_ = config.topology.nvswitch.nvls_latency;
  if (config.topology.kind == TopologyConfig::Kind::kCluster) nvls_latency_ = config.topology.cluster.node.nvls_latency;
  if (!config_.file.empty() && !config.file.empty() && config.file.front() != '<') {
    config_dir_ = std::filesystem::path(config.file).parent_path().string();
  }
  // Check every size's program now, so a bad algorithm fails before any event.
  for (std::int64_t bytes : config_.sizes) {
    try {
      const CollectiveProgram p = program_for(bytes);
      if (auto problem = check_program(p, config_.check_data)) throw std::invalid_argument(*problem);
    } catch (const ConfigError&) {
      throw;  // already located in the steps file
    } catch (const std::exception& e) {
      const SourceRef& src = config_.file.empty() ? config.topology.source : config_.file_source;
      throw ConfigError(config_.file.empty() ? where : src.where, config_.file.empty() ? "workload" : src.path, e.what());
    }
  }
  // In-network algorithms need a switch layer that reduces and copies for these ranks.
  if (!config_.sizes.empty()) {
    const CollectiveProgram p = program_for(config_.sizes.front());
    if (uses_in_network(p)) {
      if (auto problem = CollectiveExecutor::in_network_problem(network, p, hosts_)) throw ConfigError(where, "workload.algorithm", *problem);
    }
  }
}

std::string CollectiveSweep::algorithm_for(std::int64_t bytes) const {
  if (config_.algorithm != "auto") return config_.algorithm;
  return choose_algorithm(config_.op, bytes, tuner_facts_).algorithm;
}

const char* nccl_algo_name(const std::string& a) {
  if (a == "ring") return "Ring";
  if (a == "tree") return "Tree";
  if (a == "nvls") return "NVLS";
  if (a == "nvls_tree") return "NVLSTree";
  if (a == "msccl" || a == "steps") return "MSCCL";
  return "-";  // ours, no NCCL counterpart
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
  AlgorithmParams params;
  params.channels = config_.channels;
  params.chunk_bytes = config_.chunk_bytes;
  params.root = config_.root;
  params.local_size = local_size_;
  const std::string algorithm = algorithm_for(bytes);
  if (algorithm == "nvls" || algorithm == "nvls_tree") params.start_latency_ps = nvls_latency_;
  return build_collective(algorithm, config_.op, ranks_, bytes, params);
}

void CollectiveSweep::on_event() { start_next(); }

void CollectiveSweep::start_next() {
  if (current_) {
    CollectiveRow& row = rows_.back();
    row.time = current_->finished_at() - current_->started_at();
    const double seconds = to_seconds(row.time);
    row.algbw_GBps = seconds > 0 ? static_cast<double>(row.size_bytes) / seconds * 1e-9 : 0;
    row.busbw_GBps = row.algbw_GBps * busbw_factor(config_.op, ranks_);
    row.data_check = !config_.check_data ? "off" : current_->data_error() ? *current_->data_error() : "passed";
    finished_.push_back(std::move(current_));
  }
  if (next_ >= config_.sizes.size()) return;
  const std::int64_t bytes = config_.sizes[next_++];
  rows_.push_back({bytes, -1, 0, 0, "not finished", algorithm_for(bytes)});
  CollectiveOptions options;
  options.reduce_bytes_per_second = config_.reduce_bytes_per_second;
  options.check_data = config_.check_data;
  options.traffic_class = traffic_class_;
  current_ = std::make_unique<CollectiveExecutor>(*network_, program_for(bytes), hosts_, options);
  current_->set_on_done([this] { start_next(); });
  current_->start();
}

}  // namespace fabricsim
