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

}  // namespace fabricsim
