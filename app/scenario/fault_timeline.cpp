#include "app/scenario/fault_timeline.h"

#include <algorithm>

#include "app/config/config_error.h"

namespace fabricsim {

std::unique_ptr<FaultTimeline> FaultTimeline::prepare(const ScenarioConfig& config, const Topology& topology, Network& network,
                                                      std::vector<AppliedFault>& applied) {
  std::vector<FaultSpec> specs;
  for (const FaultConfig& f : config.faults) specs.push_back(f.spec);
  std::vector<TimedFault> timed;
  try {
    timed = timed_faults(topology, specs);
  } catch (const FaultError& e) {
    const SourceRef& at = config.faults[e.fault].source;
    throw ConfigError(at.where, at.path, e.what);
  }
  if (timed.empty()) return nullptr;
  const SourceRef& first = config.faults[timed.front().fault].source;
  if (config.network.fidelity == NetworkConfig::Fidelity::kFlow) {
    throw ConfigError(first.where, first.path + ".at",
                      "failures during the run are modelled at packet fidelity; expected no `at` here, or fidelity packet");
  }
  // Each detection installs the routes without every link failed so far.
  std::vector<bool> down(topology.links().size(), false);
  std::vector<Action> actions;
  std::vector<std::pair<Time, std::size_t>> detections;  // (time, index into timed)
  for (std::size_t i = 0; i < timed.size(); ++i) {
    actions.push_back({timed[i].at, timed[i].links, nullptr});
    detections.emplace_back(timed[i].detected, i);
    for (std::size_t l : timed[i].links) {
      const TopologyLink& link = topology.links()[l];
      applied.push_back({timed[i].fault, topology.node(link.a).name, topology.node(link.b).name, link.tier, true, link.bandwidth,
                         link.latency, timed[i].at, timed[i].detected});
    }
  }
  std::stable_sort(detections.begin(), detections.end());
  for (const auto& [when, i] : detections) {
    for (std::size_t l : timed[i].links) down[l] = true;
    auto routes = std::make_shared<Routes>(routes_without(topology, down));
    if (!routes->unreachable.empty()) {
      const SourceRef& at = config.faults[timed[i].fault].source;
      throw ConfigError(at.where, at.path, "this failure cuts the fabric: " + routes->unreachable);
    }
    actions.push_back({when, {}, std::move(routes)});
  }
  std::stable_sort(actions.begin(), actions.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
  return std::unique_ptr<FaultTimeline>(new FaultTimeline(topology, network, std::move(actions)));
}

FaultTimeline::FaultTimeline(const Topology& topology, Network& network, std::vector<Action> actions)
    : topology_(&topology), network_(&network), actions_(std::move(actions)) {
  // Each partition applies a failure to what it runs, from an event of its own at the
  // failure's time (first at that time: a monitor's key); the timeline arms them a
  // picosecond before, so the partitions' events are in round 0 of that time for any
  // split (a split run's monitors run between windows).
  for (std::size_t q = 0; q < network.partition_count(); ++q) {
    Applier& a = appliers_.emplace_back();
    a.timeline = this;
    a.partition = static_cast<std::uint32_t>(q);
    a.set_order(2);
  }
}

void FaultTimeline::monitor_at(Time t) {
  set_order(2);
  clock_->register_monitor();
  clock_->schedule_at(*this, t);
}

void FaultTimeline::start(Simulator& clock) {
  clock_ = &clock;
  const Time first_time = actions_.front().time;
  if (first_time == 0) {
    arm();  // before the run: at 0, in round 0
    if (next_ < actions_.size()) monitor_at(actions_[next_].time - 1);
  } else {
    monitor_at(first_time - 1);
  }
}

void FaultTimeline::arm() {
  const Time at = actions_[next_].time;
  first_ = next_;
  while (next_ < actions_.size() && actions_[next_].time == at) ++next_;
  for (Applier& a : appliers_) {
    a.first = first_;
    a.last = next_;
    network_->partition(a.partition).schedule_at(a, at);
  }
}

void FaultTimeline::on_event() {
  arm();
  if (next_ < actions_.size() && clock_->work_pending()) {
    clock_->schedule_at(*this, actions_[next_].time - 1);
  } else {
    clock_->retire_monitor();
  }
}

void FaultTimeline::Applier::on_event() {
  Network& net = *timeline->network_;
  const Topology& t = *timeline->topology_;
  for (std::size_t k = first; k < last; ++k) {
    const Action& a = timeline->actions_[k];
    // Each port is its sending node's partition's.
    for (std::size_t l : a.links) {
      const auto [ab, ba] = net.cable(l);
      for (std::size_t d : {ab, ba}) {
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

}  // namespace fabricsim
