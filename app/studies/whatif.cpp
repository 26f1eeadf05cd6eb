#include "app/studies/whatif.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "app/output/json_writer.h"
#include "app/output/result_keys.h"
#include "app/output/results.h"
#include "app/output/training_report.h"
#include "app/scenario/scenario.h"
#include "topologies/compile.h"

namespace fabricsim {

namespace {

struct Measured {
  WhatIfResult result;
  std::map<std::pair<std::string, std::string>, double> utilization;  // by (from, to)
};

Measured measure(ScenarioConfig config, const std::string& name) {
  const auto t0 = std::chrono::steady_clock::now();
  ScenarioRun run(std::move(config));
  run.run();
  Measured m;
  WhatIfResult& r = m.result;
  r.name = name;
  r.complete = run.complete();
  r.sim_time = run.sim_time();
  if (const CollectiveSweep* c = run.collective(); c && !c->rows().empty()) {
    r.collective_time = c->rows().back().time;
    r.busbw_GBps = c->rows().back().busbw_GBps;
  }
  for (std::size_t j = 0; j < run.job_count(); ++j) {
    if (!run.job(j).rows().empty()) r.collective_time = std::max(r.collective_time, run.job(j).rows().back().time);
  }
  if (const TraceReplay* replay = run.replay()) {
    const TrainingSummary s = summarize_training(*replay);
    r.iteration = s.iteration;
    r.exposed_fraction = s.exposed_fraction;
  }
  const Network& net = run.network();
  for (std::size_t i = 0; i < net.directions().size(); ++i) {
    const LinkDirection& d = net.directions()[i];
    const PortCounters c = d.port->counters();
    r.drops += c.total.drops;
    r.pauses += c.total.pauses_sent;
    m.utilization[{node_name(run.topology(), d.from), node_name(run.topology(), d.to)}] = link_utilization(run, i);
  }
  r.retransmits = net.endpoint_counters().retransmitted_packets;
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

}  // namespace

std::vector<WhatIfResult> run_whatif(const ScenarioConfig& config, const std::function<void(const std::string&)>& progress) {
  std::vector<WhatIfResult> out;
  if (progress) progress("baseline");
  const Measured base = measure(config, "baseline");
  out.push_back(base.result);
  for (const WhatIfConfig& w : config.whatif) {
    if (progress) progress(w.name);
    ScenarioConfig c = config;
    c.faults.insert(c.faults.end(), w.faults.begin(), w.faults.end());
    if (!w.stragglers.empty()) c.workload.trace.stragglers = w.stragglers;
    Measured m = measure(std::move(c), w.name);
    // The links that gained most utilization over the baseline (links a fault took out
    // are not among them).
    std::vector<HotLink> gained;
    for (const auto& [ends, u] : m.utilization) {
      const auto it = base.utilization.find(ends);
      const double before = it == base.utilization.end() ? 0.0 : it->second;
      if (u > before + 0.005) gained.push_back({ends.first, ends.second, before, u});
    }
    std::stable_sort(gained.begin(), gained.end(), [](const HotLink& a, const HotLink& b) { return a.now - a.baseline > b.now - b.baseline; });
    if (gained.size() > 3) gained.resize(3);
    m.result.hotter = std::move(gained);
    out.push_back(std::move(m.result));
  }
  return out;
}

std::string whatif_json(const ScenarioConfig& config, const std::vector<WhatIfResult>& results) {
  JsonWriter j;
  j.begin_object();
  j.key("fabricsim_version").value(FABRICSIM_VERSION);
  j.key("config_name").value(config.name);
  j.key("config_file").value(config.file);
  j.key("scenarios").begin_array();
  const WhatIfResult& base = results.front();
  for (const WhatIfResult& r : results) {
    j.begin_object();
    j.key("name").value(r.name);
    j.key(result_key::kComplete).value(r.complete);
    j.key(result_key::kSimTimePs).value(static_cast<std::int64_t>(r.sim_time));
    j.key("sim_time_vs_baseline").value(base.sim_time > 0 ? static_cast<double>(r.sim_time) / static_cast<double>(base.sim_time) : 0.0);
    if (r.collective_time >= 0) {
      j.key("collective_time_us").value(to_us(r.collective_time));
      j.key(result_key::kBusbwGBps).value(r.busbw_GBps);
    }
    if (r.iteration >= 0) {
      j.key(result_key::kIterationTimeUs).value(to_us(r.iteration));
      j.key(result_key::kExposedCommunicationFraction).value(r.exposed_fraction);
    }
    j.key(result_key::kDrops).value(r.drops).key("pauses").value(r.pauses).key("retransmitted_packets").value(r.retransmits);
    j.key("hotter_links").begin_array();
    for (const HotLink& h : r.hotter) {
      j.begin_object();
      j.key("from").value(h.from).key("to").value(h.to);
      j.key("baseline_utilization").value(h.baseline).key(result_key::kUtilization).value(h.now);
      j.end_object();
    }
    j.end_array();
    j.key(result_key::kWallSeconds).value(r.wall_seconds);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.str();
}

void print_whatif(std::ostream& out, const std::vector<WhatIfResult>& results) {
  const WhatIfResult& base = results.front();
  char line[320];
  std::snprintf(line, sizeof line, "  %-24s %8s %14s %8s %14s %12s %10s %10s %9s\n", "scenario", "complete", "time (us)", "vs base",
                "iteration(us)", "busbw(GB/s)", "drops", "pauses", "resent");
  out << line;
  for (const WhatIfResult& r : results) {
    const Time t = r.iteration >= 0 ? r.iteration : r.collective_time >= 0 ? r.collective_time : r.sim_time;
    const Time b = base.iteration >= 0 ? base.iteration : base.collective_time >= 0 ? base.collective_time : base.sim_time;
    std::snprintf(line, sizeof line, "  %-24s %8s %14.2f %7.3fx %14s %12.2f %10llu %10llu %9llu\n", r.name.c_str(), r.complete ? "yes" : "NO",
                  to_us(t), b > 0 ? static_cast<double>(t) / static_cast<double>(b) : 0.0,
                  r.iteration >= 0 ? std::to_string(to_us(r.iteration)).c_str() : "-", r.busbw_GBps,
                  static_cast<unsigned long long>(r.drops), static_cast<unsigned long long>(r.pauses),
                  static_cast<unsigned long long>(r.retransmits));
    out << line;
    for (const HotLink& h : r.hotter) {
      std::snprintf(line, sizeof line, "      hotter: %s -> %s  %.1f%% -> %.1f%%\n", h.from.c_str(), h.to.c_str(), 100 * h.baseline, 100 * h.now);
      out << line;
    }
  }
}

}  // namespace fabricsim
