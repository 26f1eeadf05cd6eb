// Synthetic traffic patterns (workloads/traffic/synthetic_traffic.h): every message made
// before the run, each to start at its own time.
#include <stdexcept>

#include "app/config/config_error.h"
#include "app/config/yaml_reader.h"
#include "app/workload/workload_kind.h"
#include "workloads/traffic/flow_size_cdf.h"
#include "workloads/traffic/synthetic_traffic.h"

namespace fabricsim {

namespace {

std::uint32_t endpoints_of(const WorkloadSetup& s) { return static_cast<std::uint32_t>(s.topology.host_count()); }

WorkloadStart post_flows(const WorkloadSetup& s, const std::vector<Flow>& flows) {
  const auto traffic_class = static_cast<std::uint8_t>(s.config.workload.traffic_class);
  for (const Flow& f : flows) s.post(f.start, s.network.add_message(f.src, f.dst, f.bytes, traffic_class));
  return {};
}

}  // namespace

WorkloadStart make_permutation_workload(const WorkloadSetup& s) {
  const WorkloadConfig& w = s.config.workload;
  return post_flows(s, permutation_traffic(endpoints_of(s), w.bytes, w.start, s.config.seed));
}

WorkloadStart make_incast_workload(const WorkloadSetup& s) {
  const WorkloadConfig& w = s.config.workload;
  const std::uint32_t endpoints = endpoints_of(s);
  std::uint32_t receiver = 0;
  if (!w.receiver.empty()) {
    const auto node = s.topology.find(w.receiver);
    if (!node || s.topology.node(*node).kind != NodeKind::kHost) {
      throw ConfigError(w.receiver_source.where, w.receiver_source.path,
                        "expected the name of an endpoint (host or GPU), got '" + w.receiver + "'");
    }
    receiver = s.topology.node(*node).kind_index;
  }
  const std::uint32_t senders = w.senders == 0 ? endpoints - 1 : static_cast<std::uint32_t>(w.senders);
  if (senders >= endpoints) {
    throw ConfigError(s.config.file, "workload.senders", "expected at most " + std::to_string(endpoints - 1) + " senders");
  }
  return post_flows(s, incast_traffic(endpoints, receiver, senders, w.bytes, w.start));
}

WorkloadStart make_uniform_workload(const WorkloadSetup& s) {
  const WorkloadConfig& w = s.config.workload;
  return post_flows(s, uniform_traffic(endpoints_of(s), static_cast<std::uint32_t>(w.flows), w.bytes, w.start, s.config.seed));
}

WorkloadStart make_poisson_workload(const WorkloadSetup& s) {
  const WorkloadConfig& w = s.config.workload;
  const std::uint32_t endpoints = endpoints_of(s);
  FlowSizeCdf cdf;
  try {
    cdf = FlowSizeCdf::load(resolve_config_path(s.config.file, w.flow_size_cdf));
  } catch (const std::runtime_error& e) {
    throw ConfigError(w.cdf_source.where, w.cdf_source.path, e.what());
  }
  std::vector<double> rates(endpoints);
  double capacity = 0;
  for (HostId h = 0; h < endpoints; ++h) capacity += rates[h] = s.endpoint_rate_bps(h);
  const std::vector<Flow> flows = poisson_traffic(rates, w.load, cdf, w.start, w.duration, s.config.seed);
  // Measure over the middle 60% of the arrival period, away from the empty start and the
  // drain after the last arrival.
  LoadWindow window;
  window.from = w.start + w.duration / 5;
  window.to = w.start + w.duration * 4 / 5;
  window.target_load = w.load;
  double offered = 0;
  for (const Flow& f : flows) {
    if (f.start >= window.from && f.start < window.to) offered += static_cast<double>(f.bytes) * 8;
  }
  window.offered_load = offered / (capacity * to_seconds(window.to - window.from));
  WorkloadStart start = post_flows(s, flows);
  start.window = window;
  return start;
}

// What each pattern can have in flight at once, and its messages made before the run.
WorkloadNeeds permutation_needs(const ScenarioConfig& config, const Topology& t) {
  const std::uint64_t hosts = t.host_count();
  return {hosts * packets_of(config, config.workload.bytes), hosts, 0};
}

WorkloadNeeds incast_needs(const ScenarioConfig& config, const Topology& t) {
  WorkloadNeeds needs;
  const WorkloadConfig& w = config.workload;
  const std::uint64_t hosts = t.host_count();
  const std::uint64_t senders = w.senders > 0 ? static_cast<std::uint64_t>(w.senders) : hosts - 1;
  needs.packets += senders * packets_of(config, w.bytes);
  needs.prebuilt_messages += senders;
  return needs;
}

WorkloadNeeds uniform_needs(const ScenarioConfig& config, const Topology&) {
  const auto flows = static_cast<std::uint64_t>(config.workload.flows);
  return {flows * packets_of(config, config.workload.bytes), flows, 0};
}

WorkloadNeeds poisson_needs(const ScenarioConfig& config, const Topology& t) {
  WorkloadNeeds needs;
  const WorkloadConfig& w = config.workload;
  const NetworkConfig& n = config.network;
  // The offered bytes over the arrival period; flows at an assumed 100 kB mean.
  double rate = 0;
  for (const TopologyLink& l : t.links()) {
    if (t.node(l.a).kind == NodeKind::kHost || t.node(l.b).kind == NodeKind::kHost) rate += static_cast<double>(l.bandwidth.bits_per_second);
  }
  const double bytes = w.load * rate / 8 * to_seconds(w.duration);
  needs.packets += static_cast<std::uint64_t>(bytes / static_cast<double>(n.nic.mtu));
  needs.prebuilt_messages += static_cast<std::uint64_t>(bytes / 1e5);
  return needs;
}

}  // namespace fabricsim
