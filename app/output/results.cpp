#include "app/output/results.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "app/output/collective_report.h"
#include "app/output/flow_stats.h"
#include "app/output/json_writer.h"
#include "app/output/result_keys.h"
#include "app/output/training_report.h"
#include "sim/core/units.h"
#include "topologies/compile.h"

namespace fabricsim {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kQueueEmpty: return "no_more_events";
    case StopReason::kTimeLimit: return "time_limit";
    case StopReason::kEventLimit: return "event_limit";
    case StopReason::kRequested: return "deadlock";
    case StopReason::kNoProgress: return "no_progress";
  }
  return "unknown";
}

namespace {

double utilization(const LinkDirection& d, Time sim_time) {
  if (sim_time <= 0) return 0;
  return static_cast<double>(d.port->counters().busy_time) / static_cast<double>(sim_time);
}

// At flow fidelity: the bytes a link carried over what it could have.
double flow_utilization(const FlowModel& f, std::uint32_t link, Time sim_time) {
  if (sim_time <= 0) return 0;
  return f.link_bytes(link, sim_time) / (f.link_capacity(link) * static_cast<double>(sim_time));
}

}  // namespace

double link_utilization(const ScenarioRun& run, std::size_t i) {
  if (const FlowModel* f = run.flow_model()) return flow_utilization(*f, static_cast<std::uint32_t>(i), run.sim_time());
  return utilization(run.network().directions()[i], run.sim_time());
}

std::vector<std::string> deadlock_cycle(const ScenarioRun& run) {
  std::vector<std::string> hops;
  if (!run.deadlocked()) return hops;
  for (const auto& [sw, port] : run.deadlock_detector()->cycle()) {
    hops.push_back(node_name(run.topology(), NodeRef::sw(sw)) + ":" + std::to_string(port));
  }
  return hops;
}

namespace {

// How a split run went: why it does or does not scale. The one section (with the wall
// times) that differs between splits of the same run.
void write_parallel(JsonWriter& j, const ScenarioRun& run) {
  if (const ParallelEngine* engine = run.parallel()) {
    // How the split run went: why it does or does not scale. The one section (with the
    // wall times) that differs between splits of the same run.
    const ParallelStats& s = engine->stats();
    j.key("parallel").begin_object();
    j.key("backend").value(s.processes > 1 ? "mpi" : "threads");
    j.key("partitioner").value(run.partitioner());
    j.key("partitions").value(static_cast<std::uint64_t>(s.partitions));
    j.key("processes").value(static_cast<std::int64_t>(s.processes));
    j.key("threads").value(static_cast<std::int64_t>(s.threads));  // per process
    j.key("cut_links").value(static_cast<std::uint64_t>(s.cut_links));
    j.key("lookahead_ps").value(static_cast<std::int64_t>(s.lookahead == kTimeMax ? -1 : s.lookahead));
    j.key("windows").value(s.windows);
    // A split the run chose itself goes to one thread where its threads mostly waited.
    j.key("one_thread_from_window");
    if (s.gathered_at_window > 0) {
      j.value(s.gathered_at_window);
    } else {
      j.null();
    }
    j.key("events_per_partition").begin_array();
    std::uint64_t total = 0, busiest = 0;
    for (std::uint64_t e : s.events) {
      j.value(e);
      total += e;
      busiest = std::max(busiest, e);
    }
    j.end_array();
    j.key("blocked_seconds_per_thread").begin_array();  // the writing process's threads
    for (double b : s.blocked_seconds) j.value(b);
    j.end_array();
    j.key("critical_path_events").value(s.critical_path_events);
    // The speedup the split allows if synchronisation were free: events over the
    // busiest partition's, summed window by window (each window waits for its slowest).
    j.key("speedup_bound").value(s.critical_path_events > 0 ? static_cast<double>(total) / static_cast<double>(s.critical_path_events) : 1.0);
    j.key("balance_bound").value(busiest > 0 ? static_cast<double>(total) / static_cast<double>(busiest) : 1.0);
    j.key("events_per_window").value(s.windows > 0 ? static_cast<double>(total) / static_cast<double>(s.windows) : 0.0);
    j.end_object();
  }
}

// What the flow-level solver did (sim/flow/flow_model.h).
void write_flow_model(JsonWriter& j, const ScenarioRun& run) {
  if (const FlowModel* f = run.flow_model()) {
    // What the flow-level solver did (sim/flow/flow_model.h): its cost grows with these.
    j.key("flow_model").begin_object();
    j.key("flows").value(f->flows_started());
    j.key("rate_interval_ps").value(static_cast<std::int64_t>(f->rate_interval()));
    j.key("rate_solves").value(f->rate_solves());
    j.key("flows_per_solve").value(f->rate_solves() > 0 ? static_cast<double>(f->flows_solved()) / static_cast<double>(f->rate_solves()) : 0.0);
    j.key("max_active_flows").value(static_cast<std::uint64_t>(f->max_active_flows()));
    j.key("link_bundles").value(static_cast<std::uint64_t>(f->link_bundles()));
    j.key("link_bundles_dissolved").value(static_cast<std::uint64_t>(f->link_bundles_dissolved()));
    j.end_object();
  }
}

// What the what-if changed, link by link.
void write_faults(JsonWriter& j, const ScenarioRun& run) {
  if (!run.config().faults.empty()) {
    // What the what-if changed, link by link (both directions of each cable).
    j.key("faults").begin_array();
    for (const AppliedFault& f : run.applied_faults()) {
      j.begin_object();
      j.key("fault").value(static_cast<std::uint64_t>(f.fault));
      j.key("a").value(f.a).key("b").value(f.b).key("tier").value(f.tier);
      j.key("down").value(f.down);
      j.key("bandwidth_bps").value(static_cast<std::int64_t>(f.bandwidth.bits_per_second));
      j.key("latency_ps").value(static_cast<std::int64_t>(f.latency));
      if (f.at >= 0) {
        j.key("at_ps").value(static_cast<std::int64_t>(f.at));
        j.key("routed_around_ps").value(static_cast<std::int64_t>(f.detected));
      }
      j.end_object();
    }
    j.end_array();
  }
}

// Every field a component's counters declare, by its name.
template <typename Counters>
void write_counter_fields(JsonWriter& j, const Counters& c) {
  Counters::for_each_field([&](const CounterField& field, const auto& v) { j.key(field.name).value(v); }, c);
}

// The endpoints' transport counters, summed, and the RDMA NICs' (the transport endpoints
// of their GPUs).
void write_endpoint_counters(JsonWriter& j, const ScenarioRun& run) {
  const Network& net = run.network();
  j.key(result_key::kEndpoints).begin_object();
  write_counter_fields(j, net.endpoint_counters());
  j.end_object();
  if (net.rdma_nic_count() > 0) {
    j.key("rdma_nics").begin_object();
    j.key("count").value(static_cast<std::uint64_t>(net.rdma_nic_count()));
    write_counter_fields(j, net.rdma_nic_counters());
    j.end_object();
  }
  j.key("switch_counters").begin_object();
  write_counter_fields(j, net.switch_counters());
  j.end_object();
}

// Several jobs on one fabric.
void write_jobs(JsonWriter& j, const ScenarioRun& run) {
  const Topology& topo = run.topology();
  if (run.job_count() > 0) {
    // Several jobs on one fabric: each one's times shared, alone (on the same endpoints),
    // and the slowdown sharing cost it.
    j.key("jobs").begin_array();
    for (std::size_t k = 0; k < run.job_count(); ++k) {
      const CollectiveSweep& c = run.job(k);
      j.begin_object();
      j.key("name").value(run.config().jobs[k].name);
      j.key("op").value(op_name(c.config().op));
      j.key("algorithm").value(c.config().algorithm);
      j.key("ranks").value(c.ranks());
      write_model_fields(j, c);
      j.key(result_key::kEndpoints).begin_array();
      for (HostId h : run.job_hosts(k)) j.value(node_name(topo, NodeRef::host(h)));
      j.end_array();
      j.key(result_key::kRows).begin_array();
      for (std::size_t r = 0; r < c.rows().size(); ++r) {
        const CollectiveRow& row = c.rows()[r];
        j.begin_object();
        write_row_fields(j, row);
        if (k < run.jobs_alone().size() && r < run.jobs_alone()[k].size() && run.jobs_alone()[k][r] > 0 && row.time >= 0) {
          j.key("alone_time_us").value(to_us(run.jobs_alone()[k][r]));
          j.key(result_key::kSlowdown).value(static_cast<double>(row.time) / static_cast<double>(run.jobs_alone()[k][r]));
        }
        j.end_object();
      }
      j.end_array();
      j.end_object();
    }
    j.end_array();
  }
}

// A collective sweep's rows.
void write_collective(JsonWriter& j, const ScenarioRun& run) {
  if (const CollectiveSweep* c = run.collective()) {
    j.key(result_key::kCollective).begin_object();
    j.key("op").value(op_name(c->config().op));
    j.key("algorithm").value(c->config().algorithm);
    j.key("ranks").value(c->ranks());
    j.key("busbw_factor").value(busbw_factor(c->config().op, c->ranks()));
    write_model_fields(j, *c);
    j.key(result_key::kRows).begin_array();
    for (const CollectiveRow& row : c->rows()) {
      j.begin_object();
      write_row_fields(j, row);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
}

// A message or traffic workload's flows: completion times and slowdowns.
void write_flow_summary(JsonWriter& j, const ScenarioRun& run) {
  const Network& net = run.network();
  if (run.collective() == nullptr && !run.replay() && run.first_workload_message() < std::min<std::size_t>(net.messages().size(), net.messages().recycle_from())) {
    const FlowSummary f = summarize_flows(run, run.first_workload_message());
    const auto write_percentiles = [&](const char* name, const Percentiles& p) {
      j.key(name).begin_object();
      j.key(result_key::kP50).value(p.p50).key("p90").value(p.p90).key(result_key::kP99).value(p.p99);
      j.key("max").value(p.max).key("mean").value(p.mean);
      j.end_object();
    };
    j.key(result_key::kWorkload).begin_object();
    j.key("flows").value(static_cast<std::uint64_t>(f.flows));
    j.key("finished").value(static_cast<std::uint64_t>(f.finished));
    write_percentiles("fct_us", f.fct_us);
    write_percentiles("slowdown", f.slowdown);
    j.key("mean_throughput_fraction").value(f.mean_throughput_fraction);
    j.key("by_size").begin_array();
    for (const FlowSizeBucket& b : f.by_size) {
      j.begin_object();
      if (b.max_bytes == INT64_MAX) {
        j.key("max_bytes").null();
      } else {
        j.key("max_bytes").value(static_cast<std::int64_t>(b.max_bytes));
      }
      j.key("flows").value(static_cast<std::uint64_t>(b.flows));
      j.key("finished").value(static_cast<std::uint64_t>(b.finished));
      write_percentiles("fct_us", b.fct_us);
      write_percentiles("slowdown", b.slowdown);
      j.end_object();
    }
    j.end_array();
    if (const auto& w = run.load_window()) {
      j.key("load_window").begin_object();
      j.key("from_ps").value(static_cast<std::int64_t>(w->from)).key("to_ps").value(static_cast<std::int64_t>(w->to));
      j.key("target_load").value(w->target_load);
      j.key("offered_load").value(w->offered_load);
      j.key("delivered_load").value(w->delivered_load);
      j.end_object();
    }
    j.end_object();
  }
}

// Per switch with a shared buffer.
void write_switch_buffers(JsonWriter& j, const ScenarioRun& run) {
  const Network& net = run.network();
  const Topology& topo = run.topology();
  if (run.config().network.lossless.shared_buffer) {
    // Per switch (the top-level `switches` is their count).
    j.key("switch_buffers").begin_array();
    for (std::uint32_t i = 0; i < net.switch_count(); ++i) {
      if (net.is_rdma_nic(i)) continue;  // an endpoint, with no shared buffer
      const SwitchCounters& c = net.switch_at(i).counters();
      j.begin_object();
      j.key("name").value(node_name(topo, NodeRef::sw(i)));
      j.key("buffer_drops").value(c.buffer_drops);
      j.key("max_buffer_bytes").value(static_cast<std::int64_t>(c.max_buffer_bytes));
      j.end_object();
    }
    j.end_array();
  }
}

// Per link direction, at either fidelity.
void write_links(JsonWriter& j, const ScenarioRun& run) {
  const Network& net = run.network();
  const Topology& topo = run.topology();
  const Time sim_time = run.sim_time();
  const int classes = run.config().network.traffic_classes;
  j.key(result_key::kLinks).begin_array();
  const FlowModel* flows = run.flow_model();
  for (std::size_t i = 0; i < net.directions().size(); ++i) {
    const LinkDirection& d = net.directions()[i];
    // Which link it is, at either fidelity.
    const auto describe = [&] {
      j.key("from").value(node_name(topo, d.from));
      j.key("from_port").value(static_cast<int>(d.from_port));
      j.key("to").value(node_name(topo, d.to));
      j.key("to_port").value(static_cast<int>(d.to_port));
      j.key("bandwidth_bps").value(static_cast<std::int64_t>(d.port->bandwidth().bits_per_second));
      j.key("latency_ps").value(static_cast<std::int64_t>(d.link->latency()));
    };
    if (flows) {
      // Flows leave no queues, drops or pauses: what a link did is what it carried.
      const auto link = static_cast<std::uint32_t>(i);
      j.begin_object();
      describe();
      j.key("bytes").value(static_cast<std::uint64_t>(std::llround(flows->link_bytes(link, sim_time))));
      j.key("flows").value(flows->link_flows(link));
      j.key(result_key::kUtilization).value(flow_utilization(*flows, link, sim_time));
      j.end_object();
      continue;
    }
    const PortCounters c = d.port->counters_at(sim_time);
    const bool credit = d.port->credit_based();
    // Each field the port's counters declare (credit waits only where there are credits).
    const auto fields = [&](const ClassCounters& cc) {
      ClassCounters::for_each_field(
          [&](const CounterField& field, const auto& v) {
            if (!field.credit_only || credit) j.key(field.name).value(v);
          },
          cc);
    };
    j.begin_object();
    describe();
    fields(c.total);  // paused and credit-wait times: the longest class's
    j.key(result_key::kUtilization).value(utilization(d, sim_time));
    // Credit-based (InfiniBand, PCIe, NVLink): the far end's buffer paces the sender.
    if (credit) j.key("flow_control").value("credit");
    if (classes > 1) {
      j.key("classes").begin_array();
      for (int k = 0; k < classes; ++k) {
        j.begin_object();
        j.key("class").value(k);
        fields(c.per_class[static_cast<std::size_t>(k)]);
        j.end_object();
      }
      j.end_array();
    }
    j.end_object();
  }
  j.end_array();
}

// Queue depth samples per link direction, where any was queued.
void write_queue_samples(JsonWriter& j, const ScenarioRun& run) {
  const Network& net = run.network();
  const Topology& topo = run.topology();
  if (run.queue_sample_interval() > 0) {
    j.key("queue_samples").begin_object();
    j.key("interval_ps").value(static_cast<std::int64_t>(run.queue_sample_interval()));
    j.key(result_key::kLinks).begin_array();
    const auto& samples = run.queue_samples();
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const bool any = std::any_of(samples[i].begin(), samples[i].end(), [](std::int64_t b) { return b > 0; });
      if (!any) continue;
      const LinkDirection& d = net.directions()[i];
      j.begin_object();
      j.key("from").value(node_name(topo, d.from)).key("to").value(node_name(topo, d.to));
      j.key("bytes").begin_array();
      for (std::int64_t b : samples[i]) j.value(b);
      j.end_array();
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
}

}  // namespace

std::string config_hash_text(std::uint64_t hash) {
  char text[20];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

namespace {

void write_results(const ScenarioRun& run, JsonWriter& j) {
  const Network& net = run.network();
  const Time sim_time = run.sim_time();
  j.begin_object();
  j.key("fabricsim_version").value(FABRICSIM_VERSION);
  j.key("config_name").value(run.config().name);
  j.key("config_file").value(run.config().file);
  {
    // The config as run: its --set overrides, its hash, and the text itself when it is
    // small (a config listing millions of messages keeps only its hash).
    j.key("config_hash").value(config_hash_text(run.config().hash));
    j.key("config_overrides").begin_array();
    for (const std::string& o : run.config().overrides) j.value(o);
    j.end_array();
    if (run.config().effective.size() <= (1u << 20)) j.key("effective_config").value(run.config().effective);
  }
  j.key("seed").value(run.config().seed);
  j.key("fidelity").value(run.flow_model() ? "flow" : "packet");
  j.key(result_key::kComplete).value(run.complete());
  j.key("stop_reason").value(stop_reason_name(run.stop_reason()));
  j.key(result_key::kSimTimePs).value(static_cast<std::int64_t>(sim_time));
  j.key("events").value(run.events());
  j.key(result_key::kWallSeconds).value(run.wall_seconds());
  j.key("setup_wall_seconds").value(run.setup_wall_seconds());
  write_parallel(j, run);
  write_flow_model(j, run);
  write_faults(j, run);
  j.key("hosts").value(static_cast<std::uint64_t>(net.host_count()));
  j.key("switches").value(static_cast<std::uint64_t>(net.switch_count()));
  j.key("messages_total").value(run.messages_created());
  j.key("messages_finished").value(static_cast<std::uint64_t>(run.messages_finished()));
  j.key("deadlock").value(run.deadlocked());
  if (run.deadlocked()) {
    j.key("deadlock_detected_ps").value(static_cast<std::int64_t>(run.deadlock_detector()->detected_at()));
    j.key("deadlock_cycle").begin_array();
    for (const std::string& hop : deadlock_cycle(run)) j.value(hop);
    j.end_array();
  }
  if (const auto& stuck = run.no_progress()) {
    j.key("no_progress").begin_object();
    j.key("reason").value(stuck->reason);
    j.key("at_ps").value(static_cast<std::int64_t>(stuck->at));
    j.key("spinning").begin_array();
    for (const std::string& s : stuck->spinning) j.value(s);
    j.end_array();
    j.key("messages_left").value(stuck->messages_left);
    j.key("messages").begin_array();
    for (const std::string& m : stuck->messages) j.value(m);
    j.end_array();
    j.end_object();
  }
  write_endpoint_counters(j, run);

  write_jobs(j, run);
  if (const TraceReplay* replay = run.replay()) write_training_json(j, *replay);
  write_collective(j, run);
  write_flow_summary(j, run);

  write_switch_buffers(j, run);

  write_links(j, run);
  write_queue_samples(j, run);
  j.end_object();
}

}  // namespace

std::string results_json(const ScenarioRun& run) {
  JsonWriter j;
  write_results(run, j);
  return j.str();
}

void write_results_file(const std::string& path, const ScenarioRun& run) {
  write_file_atomically(path, [&](std::ostream& out) {
    JsonWriter j(out);
    write_results(run, j);
    j.flush();
  });
}

std::uint64_t peak_memory_bytes() {
  // The resident high-water mark the kernel kept for us (VmHWM), as /usr/bin/time's %M.
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

std::string folder_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || (c == '.' && !out.empty());
    out += plain ? c : '_';
  }
  return out.empty() ? std::string("unnamed") : out;
}

void write_file_atomically(const std::string& path, const std::string& content) {
  write_file_atomically(path, [&](std::ostream& out) { out << content; });
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  const fs::path tmp = target.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    try {
      write(f);
    } catch (...) {
      f.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      throw;
    }
    f.flush();
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw std::runtime_error("cannot write " + tmp.string());
    }
  }
  fs::rename(tmp, target);
}

}  // namespace fabricsim
