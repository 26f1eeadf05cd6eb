// The terminal summary of a finished run (fabricsim run without --json).
#include <algorithm>
#include <cstdio>

#include "app/output/flow_stats.h"
#include "app/output/results.h"
#include "app/output/training_report.h"
#include "sim/core/units.h"
#include "topologies/compile.h"

namespace fabricsim {

void print_summary(std::ostream& out, const ScenarioRun& run, const std::string& results_path) {
  const Network& net = run.network();
  const Topology& topo = run.topology();
  const Time sim_time = run.sim_time();
  out << "fabricsim: " << run.config().name << " (seed " << run.config().seed << (run.flow_model() ? ", flow fidelity" : "") << ")\n";
  out << "  network   " << net.host_count() << " hosts, " << net.switch_count() << " switches, "
      << net.directions().size() / 2 << " links\n";
  out << "  messages  " << run.messages_finished() << " of " << run.messages_created() << " finished"
      << (run.complete() ? "" : "  (INCOMPLETE: " + std::string(stop_reason_name(run.stop_reason())) + ")") << "\n";
  if (const auto& stuck = run.no_progress()) {
    out << "  NO PROGRESS at " << format_time(stuck->at) << ": " << stuck->reason << "\n";
    if (!stuck->spinning.empty()) out << "  spinning (the events that followed):\n";
    for (const std::string& s : stuck->spinning) out << "    " << s << "\n";
    out << "  left      " << stuck->messages_left << " started messages unfinished\n";
    for (const std::string& m : stuck->messages) out << "    " << m << "\n";
  }
  if (const SlowestMessage m = run.message_log().slowest(); m.took >= 0) {
    out << "  slowest   message " << m.serial << " (" << node_name(topo, NodeRef::host(m.src)) << " -> "
        << node_name(topo, NodeRef::host(m.dst)) << ", " << m.bytes << " B) took " << format_time(m.took) << "\n";
  }
  const LinkDirection* busiest = nullptr;
  PortCounters busiest_counters;
  std::uint64_t drops = 0, pauses = 0, marks = 0, retransmits = 0;
  for (const LinkDirection& d : net.directions()) {
    const PortCounters c = d.port->counters();  // totals over classes, worked out once
    drops += c.total.drops;
    pauses += c.total.pauses_sent;
    marks += c.total.ecn_marks;
    if (!busiest || c.busy_time > busiest_counters.busy_time) busiest = &d, busiest_counters = c;
  }
  if (const FlowModel* flows = run.flow_model(); flows && sim_time > 0) {
    std::uint32_t best = 0;
    for (std::uint32_t i = 1; i < net.directions().size(); ++i) {
      if (link_utilization(run, i) > link_utilization(run, best)) best = i;
    }
    busiest = nullptr;
    if (!net.directions().empty()) {
      char util[32];
      std::snprintf(util, sizeof util, "%.1f%%", 100.0 * link_utilization(run, best));
      out << "  busiest   " << node_name(topo, net.directions()[best].from) << " -> " << node_name(topo, net.directions()[best].to)
          << " at " << util << " (flow fidelity: no queues)\n";
    }
  }
  if (busiest && sim_time > 0) {
    char util[32];
    std::snprintf(util, sizeof util, "%.1f%%", 100.0 * link_utilization(run, static_cast<std::size_t>(busiest - net.directions().data())));
    out << "  busiest   " << node_name(topo, busiest->from) << " -> " << node_name(topo, busiest->to) << " at "
        << util << ", max queue " << busiest_counters.total.max_queue_bytes << " B\n";
  }
  retransmits = net.endpoint_counters().retransmitted_packets;
  out << "  drops     " << drops << ", retransmitted " << retransmits << " packets";
  if (run.config().network.lossless.pfc_classes_mask != 0) out << ", PFC pauses " << pauses;
  if (run.config().network.lossless.ecn.enabled) out << ", ECN marks " << marks;
  out << "\n";
  if (run.deadlocked()) {
    out << "  DEADLOCK  at " << format_time(run.deadlock_detector()->detected_at()) << ", cycle:";
    for (const std::string& hop : deadlock_cycle(run)) out << " " << hop << " ->";
    out << " (back to the first)\n";
  }
  if (const TraceReplay* replay = run.replay()) print_training(out, *replay);
  for (std::size_t k = 0; k < run.job_count(); ++k) {
    const CollectiveSweep& c = run.job(k);
    out << "  job " << run.config().jobs[k].name << ": " << op_name(c.config().op) << " (" << c.config().algorithm << ") over "
        << c.ranks() << " ranks\n";
    for (std::size_t r = 0; r < c.rows().size(); ++r) {
      const CollectiveRow& row = c.rows()[r];
      char line[160];
      const bool alone = k < run.jobs_alone().size() && r < run.jobs_alone()[k].size() && run.jobs_alone()[k][r] > 0;
      std::snprintf(line, sizeof line, "    %14lld B  %12.2f us", static_cast<long long>(row.size_bytes), row.time >= 0 ? to_us(row.time) : -1.0);
      out << line;
      if (alone && row.time >= 0) {
        std::snprintf(line, sizeof line, "  alone %12.2f us  slowdown %.3fx", to_us(run.jobs_alone()[k][r]),
                      static_cast<double>(row.time) / static_cast<double>(run.jobs_alone()[k][r]));
        out << line;
      }
      out << "\n";
    }
  }
  if (const CollectiveSweep* c = run.collective()) {
    out << "  collective " << op_name(c->config().op) << " (" << c->config().algorithm << ") over " << c->ranks() << " ranks\n";
    print_collective_table(out, *c);
  } else if (!run.replay() && run.first_workload_message() < std::min<std::size_t>(net.messages().size(), net.messages().recycle_from())) {
    const FlowSummary f = summarize_flows(run, run.first_workload_message());
    char line[256];
    std::snprintf(line, sizeof line,
                  "  flows     %zu of %zu finished; FCT p50 %.1f us, p99 %.1f us; slowdown p50 %.2f, p99 %.2f; "
                  "mean goodput %.1f%% of the rate alone\n",
                  f.finished, f.flows, f.fct_us.p50, f.fct_us.p99, f.slowdown.p50, f.slowdown.p99,
                  100 * f.mean_throughput_fraction);
    out << line;
    if (const auto& w = run.load_window()) {
      std::snprintf(line, sizeof line, "  load      target %.1f%%, offered %.1f%%, delivered %.1f%% (%s to %s)\n",
                    100 * w->target_load, 100 * w->offered_load, 100 * w->delivered_load, format_time(w->from).c_str(),
                    format_time(w->to).c_str());
      out << line;
    }
  }
  const double wall = run.wall_seconds();
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.3f s wall, %.2f M events/s", wall,
                wall > 0 ? static_cast<double>(run.events()) / wall * 1e-6 : 0.0);
  out << "  simulated " << format_time(sim_time) << " in " << run.events() << " events, " << rate
      << "\n";
  char threads[32] = "";
  if (run.setup_threads() > 1) std::snprintf(threads, sizeof threads, " on %d threads", run.setup_threads());
  char setup[128];
  std::snprintf(setup, sizeof setup, "  setup     %.3f s%s; peak memory %.1f MB (estimated %.1f MB)\n", run.setup_wall_seconds(),
                threads, static_cast<double>(peak_memory_bytes()) / 1e6, static_cast<double>(run.memory_estimate().total()) / 1e6);
  out << setup;
  if (!results_path.empty()) out << "  results   " << results_path << "\n";
}

}  // namespace fabricsim
