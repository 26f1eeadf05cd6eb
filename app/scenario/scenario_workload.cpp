// ScenarioRun's workloads: the workload's kind, made by its entry in the registry
// (app/workload/workload_kinds.cpp), jobs side by side, and placement.
#include "app/scenario/scenario.h"

#include <algorithm>

#include "app/config/config_error.h"
#include "app/workload/workload_kind.h"
#include "sim/core/rng.h"

namespace fabricsim {

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
    auto sweep = std::make_unique<CollectiveSweep>(*network_, topology_, c, hosts);
    jobs_.push_back(sweep.get());
    add_driver(std::move(sweep), job.workload.start);
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

void ScenarioRun::add_driver(std::unique_ptr<WorkloadDriver> driver, Time at) {
  driver->start(at, !partitions_.empty());
  drivers_.push_back(std::move(driver));
}

void ScenarioRun::add_workload(const RoutingProgress& trace_progress, const SetupNote& setup_note) {
  const WorkloadKind* kind = find_workload_kind(config_.workload.kind);
  if (kind == nullptr) return;
  const WorkloadSetup setup{config_,
                            topology_,
                            *network_,
                            placement(),
                            trace_progress,
                            [this](Time start, MessageId id) {
                              schedule_message(start, id);
                              starts_.push_back(start);
                            },
                            [this](HostId h) { return endpoint_rate_bps(h); },
                            trace_ahead_ ? std::function<PreparedTrace()>([this] { return trace_ahead_->take(); }) : nullptr,
                            setup_note};
  WorkloadStart start = kind->make(setup);
  window_ = start.window;
  if (!start.driver) return;
  // Views by kind, for the writers.
  collective_ = dynamic_cast<CollectiveSweep*>(start.driver.get());
  replay_ = dynamic_cast<TraceReplay*>(start.driver.get());
  add_driver(std::move(start.driver), config_.workload.start);
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
