#include "app/scenario.h"

#include <stdexcept>

#include "app/config_error.h"
#include "topologies/compile.h"
#include "topologies/leaf_spine.h"

namespace fabricsim {

Topology build_topology(const TopologyConfig& config) {
  Topology t;
  if (config.kind == TopologyConfig::Kind::kLeafSpine) {
    t = build_leaf_spine(config.leaf_spine);
  } else {
    const CustomTopologyConfig& c = config.custom;
    for (const auto& h : c.hosts) t.add_host(h);
    for (const auto& s : c.switches) t.add_switch(s);
    for (const auto& l : c.links) t.connect(*t.find(l.a), *t.find(l.b), l.link.bandwidth, l.link.latency, "link");
  }
  if (std::string problem = check_topology(t); !problem.empty()) {
    throw ConfigError(config.source.where, config.source.path, problem);
  }
  return t;
}

ScenarioRun::ScenarioRun(ScenarioConfig config) : config_(std::move(config)) {
  topology_ = build_topology(config_.topology);
  const NetworkConfig& n = config_.network;
  NetworkOptions options;
  options.params.traffic_classes = n.traffic_classes;
  options.params.load_balancing = n.load_balancing;
  options.params.salt_seed = config_.seed;
  options.params.nic.mtu = static_cast<std::uint32_t>(n.mtu);
  options.params.nic.header_bytes = static_cast<std::uint32_t>(n.header_bytes);
  options.params.nic.ack_bytes = static_cast<std::uint32_t>(n.ack_bytes);
  options.params.nic.ack_interval = static_cast<std::uint32_t>(n.ack_interval);
  options.params.nic.ack_traffic_class = static_cast<std::uint8_t>(n.ack_traffic_class);
  options.switch_queue_capacity_bytes = n.queue_capacity;

  sim_ = std::make_unique<Simulator>(config_.seed);
  try {
    network_ = compile_network(topology_, *sim_, options);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(config_.topology.source.where, config_.topology.source.path, e.what());
  }
  schedule_ = std::make_unique<MessageSchedule>(*network_);
  network_->messages().reserve(config_.messages.size());
  const auto host = [&](const std::string& name, const SourceRef& src) {
    const auto node = topology_.find(name);
    if (!node || topology_.node(*node).kind != NodeKind::kHost) {
      throw ConfigError(src.where, src.path, "expected the name of a host, got '" + name + "'");
    }
    return topology_.node(*node).kind_index;
  };
  for (const MessageConfig& m : config_.messages) {
    const HostId src = host(m.src, m.src_source);
    const HostId dst = host(m.dst, m.dst_source);
    const MessageId id = network_->add_message(src, dst, m.bytes, static_cast<std::uint8_t>(m.traffic_class));
    schedule_->add(m.start, id);
  }
  schedule_->arm();
}

void ScenarioRun::run(const std::function<void(const Progress&)>& progress) {
  constexpr std::uint64_t kChunk = 4'000'000;
  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  for (;;) {
    const std::uint64_t done = sim_->events_processed();
    const std::uint64_t left = config_.stop.events - std::min(done, config_.stop.events);
    const std::uint64_t chunk = std::min(left, kChunk);
    stop_reason_ = sim_->run(config_.stop.time, chunk);
    if (stop_reason_ != StopReason::kEventLimit || chunk == left) break;
    if (progress) {
      progress({sim_->now(), sim_->events_processed(), messages_finished(), network_->messages().size(), elapsed()});
    }
  }
  wall_seconds_ = elapsed();
}

std::size_t ScenarioRun::messages_finished() const {
  std::size_t n = 0;
  for (HostId h = 0; h < network_->host_count(); ++h) n += network_->nic(h).counters().messages_finished;
  return n;
}

bool ScenarioRun::complete() const { return messages_finished() == network_->messages().size(); }

}  // namespace fabricsim
