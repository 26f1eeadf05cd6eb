// Synthetic traffic patterns (workloads/traffic/synthetic_traffic.h): every message made
// before the run, each to start at its own time.
#include <any>
#include <stdexcept>

#include "app/config/config_error.h"
#include "app/config/workload_config.h"
#include "app/config/yaml_reader.h"
#include "app/workload/workload_kind.h"
#include "workloads/traffic/flow_size_cdf.h"
#include "workloads/traffic/synthetic_traffic.h"

namespace fabricsim {

namespace {

// The patterns' own keys.
struct TrafficSettings {
  std::int64_t bytes = 0;  // permutation, incast, uniform: each flow's
  std::string receiver;    // incast; empty: the first endpoint
  SourceRef receiver_source;
  int senders = 0;         // incast; 0: every other endpoint
  int flows = 0;           // uniform
  double load = 0;         // poisson: offered load, fraction of each endpoint's line rate
  std::string flow_size_cdf;  // poisson: the CDF file, resolved against the config's folder
  SourceRef cdf_source;
  Time duration = 0;       // poisson: arrivals in [start, start + duration)
};

const TrafficSettings& settings_of(const WorkloadConfig& w) { return std::any_cast<const TrafficSettings&>(w.settings); }

TrafficSettings read_flow_bytes(MapReader& m, const WorkloadReading& reading) {
  TrafficSettings t;
  t.bytes = m.bytes("bytes", 1, INT64_C(1) << 40);
  check_packet_count(m.context(), m.node()["bytes"], m.child_path("bytes"), t.bytes, reading.mtu);
  return t;
}

std::uint32_t endpoints_of(const WorkloadSetup& s) { return static_cast<std::uint32_t>(s.topology.host_count()); }

WorkloadStart post_flows(const WorkloadSetup& s, const std::vector<Flow>& flows) {
  const auto traffic_class = static_cast<std::uint8_t>(s.config.workload.traffic_class);
  for (const Flow& f : flows) s.post(f.start, s.network.add_message(f.src, f.dst, f.bytes, traffic_class));
  return {};
}

}  // namespace

void read_permutation_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading& reading) {
  w.settings = read_flow_bytes(m, reading);
}

void read_incast_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading& reading) {
  TrafficSettings t = read_flow_bytes(m, reading);
  t.receiver = m.string("receiver", std::string());
  if (!t.receiver.empty()) t.receiver_source = m.context().source(m.node()["receiver"], m.child_path("receiver"));
  t.senders = static_cast<int>(m.integer("senders", 1, 1 << 20, 0));
  w.settings = t;
}

void read_uniform_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading& reading) {
  TrafficSettings t = read_flow_bytes(m, reading);
  t.flows = static_cast<int>(m.integer("flows", 1, 10'000'000));
  w.settings = t;
}

void read_poisson_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading&) {
  TrafficSettings t;
  t.load = m.real("load", 0.001, 1.0);
  t.flow_size_cdf = m.string("flow_size_cdf");
  t.cdf_source = m.context().source(m.node()["flow_size_cdf"], m.child_path("flow_size_cdf"));
  t.duration = m.time("duration");
  if (t.duration <= 0) m.context().fail(m.node()["duration"], m.child_path("duration"), "expected a time above zero");
  w.settings = t;
}

WorkloadStart make_permutation_workload(const WorkloadSetup& s) {
  const WorkloadConfig& w = s.config.workload;
  return post_flows(s, permutation_traffic(endpoints_of(s), settings_of(w).bytes, w.start, s.config.seed));
}

WorkloadStart make_incast_workload(const WorkloadSetup& s) {
  const WorkloadConfig& w = s.config.workload;
  const TrafficSettings& t = settings_of(w);
  const std::uint32_t endpoints = endpoints_of(s);
  std::uint32_t receiver = 0;
  if (!t.receiver.empty()) {
    const auto node = s.topology.find(t.receiver);
    if (!node || s.topology.node(*node).kind != NodeKind::kHost) {
      throw ConfigError(t.receiver_source.where, t.receiver_source.path,
                        "expected the name of an endpoint (host or GPU), got '" + t.receiver + "'");
    }
    receiver = s.topology.node(*node).kind_index;
  }
  const std::uint32_t senders = t.senders == 0 ? endpoints - 1 : static_cast<std::uint32_t>(t.senders);
  if (senders >= endpoints) {
    throw ConfigError(s.config.file, "workload.senders", "expected at most " + std::to_string(endpoints - 1) + " senders");
  }
  return post_flows(s, incast_traffic(endpoints, receiver, senders, t.bytes, w.start));
}

WorkloadStart make_uniform_workload(const WorkloadSetup& s) {
  const WorkloadConfig& w = s.config.workload;
  const TrafficSettings& t = settings_of(w);
  return post_flows(s, uniform_traffic(endpoints_of(s), static_cast<std::uint32_t>(t.flows), t.bytes, w.start, s.config.seed));
}

WorkloadStart make_poisson_workload(const WorkloadSetup& s) {
  const WorkloadConfig& w = s.config.workload;
  const TrafficSettings& t = settings_of(w);
  const std::uint32_t endpoints = endpoints_of(s);
  FlowSizeCdf cdf;
  try {
    cdf = FlowSizeCdf::load(resolve_config_path(s.config.file, t.flow_size_cdf));
  } catch (const std::runtime_error& e) {
    throw ConfigError(t.cdf_source.where, t.cdf_source.path, e.what());
  }
  std::vector<double> rates(endpoints);
  double capacity = 0;
  for (HostId h = 0; h < endpoints; ++h) capacity += rates[h] = s.endpoint_rate_bps(h);
  const std::vector<Flow> flows = poisson_traffic(rates, t.load, cdf, w.start, t.duration, s.config.seed);
  // Measure over the middle 60% of the arrival period, away from the empty start and the
  // drain after the last arrival.
  LoadWindow window;
  window.from = w.start + t.duration / 5;
  window.to = w.start + t.duration * 4 / 5;
  window.target_load = t.load;
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
  return {hosts * packets_of(config, settings_of(config.workload).bytes), hosts, 0};
}

WorkloadNeeds incast_needs(const ScenarioConfig& config, const Topology& t) {
  WorkloadNeeds needs;
  const TrafficSettings& w = settings_of(config.workload);
  const std::uint64_t hosts = t.host_count();
  const std::uint64_t senders = w.senders > 0 ? static_cast<std::uint64_t>(w.senders) : hosts - 1;
  needs.packets += senders * packets_of(config, w.bytes);
  needs.prebuilt_messages += senders;
  return needs;
}

WorkloadNeeds uniform_needs(const ScenarioConfig& config, const Topology&) {
  const auto flows = static_cast<std::uint64_t>(settings_of(config.workload).flows);
  return {flows * packets_of(config, settings_of(config.workload).bytes), flows, 0};
}

WorkloadNeeds poisson_needs(const ScenarioConfig& config, const Topology& t) {
  WorkloadNeeds needs;
  const TrafficSettings& w = settings_of(config.workload);
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
