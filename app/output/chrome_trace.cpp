#include "app/output/chrome_trace.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "app/scenario/scenario.h"
#include "topologies/compile.h"

namespace fabricsim {

namespace {

// Process ids: the link tracks first, then one process per endpoint.
constexpr int kLinksPid = 1;
constexpr int kPausesPid = 2;
constexpr int kQueuesPid = 3;
constexpr int kFirstEndpointPid = 10;
// Thread ids inside an endpoint's process, by activity kind (plus the lane).
constexpr int kLaneBase[3] = {1, 100, 1000};
constexpr const char* kLaneName[3] = {"compute", "communication", "steps"};
// A message workload's messages: sent (posted to finished) and received (at delivery).
constexpr int kSentLaneBase = 10000;
constexpr int kReceivedLaneBase = 20000;

// Trace-event time is in microseconds; picoseconds are exact with six decimals.
std::string micros(Time ps) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%06" PRId64, ps / 1'000'000, ps % 1'000'000);
  return buf;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string metadata(const char* what, int pid, int tid, const std::string& key, const std::string& value) {
  return "{\"ph\":\"M\",\"name\":\"" + std::string(what) + "\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"" + key + "\":" + value + "}}";
}

}  // namespace

ChromeTraceRecorder::ChromeTraceRecorder(ChromeTraceOptions options, ScenarioRun& run)
    : options_(std::move(options)), run_(&run) {
  const std::filesystem::path p(options_.path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  out_ = std::make_unique<std::ofstream>(options_.path + ".partial", std::ios::trunc);
  if (!*out_) throw std::runtime_error("cannot write " + options_.path + ".partial");
  *out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  directions_.resize(run.network().directions().size());
  endpoints_.resize(run.network().host_count());
}

void ChromeTraceRecorder::start() {
  run_->set_activity_listener(this);
  if (run_->config().network.fidelity != NetworkConfig::Fidelity::kPacket) return;  // flows leave ports idle
  sampling_ = true;
  interval_ = options_.interval;
  if (!options_.fixed_interval && run_->replay() != nullptr) {
    // A training step lasts at least its busiest rank's compute: start coarse enough
    // that about 2,048 samples cover that.
    const Trace& trace = run_->replay()->trace();
    Time longest = 0;
    for (const auto& ops : trace.ops) {
      Time sum = 0;
      for (const TraceOp& op : ops) {
        if (op.kind == TraceOpKind::kCompute) sum += trace.compute_time(op);
      }
      longest = std::max(longest, sum);
    }
    while (interval_ * 2048 < longest) interval_ *= 2;
  }
  first_interval_ = interval_;
  next_coarsening_ = (options_.max_events + 1) / 4;
  run_->add_monitor(*this, 3, options_.from);
}

void ChromeTraceRecorder::write(const std::string& line) {
  if (!first_) *out_ << ",\n";
  first_ = false;
  *out_ << line;
}

bool ChromeTraceRecorder::admit(bool link) {
  const std::int64_t half = (options_.max_events + 1) / 2;
  if ((link ? written_by_links_ : written_ - written_by_links_) >= half) {
    if (link && links_cut_at_ < 0) links_cut_at_ = run_->monitor_clock().now();
    ++dropped_;
    return false;
  }
  ++written_;
  if (link) ++written_by_links_;
  return true;
}

void ChromeTraceRecorder::slice(bool link, int pid, int tid, std::string_view name, Time begin, Time end,
                                std::string_view args) {
  if (!admit(link)) return;
  std::string line = "{\"ph\":\"X\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
                     ",\"ts\":" + micros(begin) + ",\"dur\":" + micros(end - begin) + ",\"name\":" + json_string(name);
  if (!args.empty()) line += ",\"args\":{" + std::string(args) + "}";
  write(line + "}");
}

void ChromeTraceRecorder::on_activity(HostId endpoint, Activity kind, std::string_view what, Time begin, Time end,
                                      const ActivityDetail& detail) {
  // A run split over threads reports each endpoint's activities from its partition's
  // thread (in order of their end, endpoint by endpoint), several at once; links are
  // sampled between windows, when no one reports.
  const std::lock_guard<std::mutex> lock(activity_mutex_);
  begin = std::max(begin, options_.from);
  end = std::min(end, options_.to);
  if (end < begin || endpoint >= endpoints_.size()) return;
  EndpointTracks& e = endpoints_[endpoint];
  e.named = true;
  // Reports come in order of their end, so a lane whose last slice ended by `begin` has
  // nothing after it: the new slice cannot cross any slice already there.
  std::vector<Time>& lanes = e.lanes[static_cast<int>(kind)];
  std::size_t lane = 0;
  while (lane < lanes.size() && lanes[lane] > begin) ++lane;
  if (lane == lanes.size()) lanes.push_back(end);
  lanes[lane] = end;
  std::string args;
  const auto add = [&](const char* key, std::int64_t v) {
    if (v >= 0) args += (args.empty() ? "\"" : ",\"") + std::string(key) + "\":" + std::to_string(v);
  };
  add("bytes", detail.bytes);
  add("peer_rank", detail.peer);
  add("step", detail.step);
  add("channel", detail.channel);
  slice(false, kFirstEndpointPid + static_cast<int>(endpoint), kLaneBase[static_cast<int>(kind)] + static_cast<int>(lane), what,
        begin, end, args);
}

void ChromeTraceRecorder::on_event() {
  Simulator& clock = run_->monitor_clock();
  const Time now = clock.now();
  sample(now);
  if (!options_.fixed_interval) {
    // Coarser as the run goes long (sampling cost), and as the links' half of the bound
    // fills: each time half of what is left of it is spent, the interval doubles, so the
    // events per simulated second halve with the budget and the link tracks reach the
    // end of the run at a coarser resolution instead of stopping early.
    if (++samples_ % 2048 == 0) interval_ *= 2;
    const std::int64_t half = (options_.max_events + 1) / 2;
    while (written_by_links_ >= next_coarsening_ && next_coarsening_ < half) {
      interval_ *= 2;
      next_coarsening_ += std::max<std::int64_t>(1, (half - next_coarsening_) / 2);
    }
  } else {
    ++samples_;
  }
  if (clock.work_pending() && now < options_.to) {
    clock.schedule_at(*this, std::min(now + interval_, options_.to));
  } else {
    clock.retire_monitor();
  }
}

std::string ChromeTraceRecorder::direction_name(std::size_t d) const {
  const LinkDirection& dir = run_->network().directions()[d];
  return node_name(run_->topology(), dir.from) + ":" + std::to_string(dir.from_port) + " -> " +
         node_name(run_->topology(), dir.to);
}

void ChromeTraceRecorder::close_period(Period& p, int pid, std::size_t direction, const char* name, Time latest) {
  if (p.begin < 0) return;
  const Time end = std::max(p.begin, std::min(p.end(), latest));
  const double share = end > p.begin ? std::min(1.0, static_cast<double>(p.total) / static_cast<double>(end - p.begin)) : 1.0;
  char args[48];
  std::snprintf(args, sizeof args, "\"%s\":%.3f", pid == kLinksPid ? "utilization" : "paused_share", share);
  slice(true, pid, static_cast<int>(direction) + 1, name, p.begin, end, args);
  p.begin = -1;
  p.total = 0;
}

void ChromeTraceRecorder::sample(Time now) {
  const auto& dirs = run_->network().directions();
  const Time interval_start = last_sample_;
  const Time length = now - interval_start;
  const bool baseline = !baseline_taken_;
  baseline_taken_ = true;
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    DirectionState& st = directions_[d];
    const PortCounters c = dirs[d].port->counters_at(now);
    const Time paused = c.total.paused_time;  // the longest class's, as results.json has it
    const Time busy_delta = c.busy_time - st.busy;
    const Time pause_delta = paused - st.paused;
    st.busy = c.busy_time;
    st.paused = paused;
    if (baseline) continue;
    const auto update = [&](Period& p, Time amount, int pid, const char* name, bool& named) {
      amount = std::min(amount, length);
      if (amount > 0) {
        if (p.begin < 0) {
          p.begin = now - amount;
          p.first_sample = now;
        }
        p.total += amount;
        p.last_interval_start = interval_start;
        p.last_amount = amount;
        p.last_sample = now;
        named = true;
      } else {
        close_period(p, pid, d, name, now);
      }
    };
    update(st.busy_period, busy_delta, kLinksPid, "busy", st.named_busy);
    update(st.pause_period, pause_delta, kPausesPid, "PFC paused", st.named_pause);
    const std::int64_t q = dirs[d].port->queued_bytes();
    if (q != st.queue && now >= options_.from && now <= options_.to) {
      st.queue = q;
      if (admit(true)) {
        write("{\"ph\":\"C\",\"pid\":" + std::to_string(kQueuesPid) + ",\"ts\":" + micros(now) +
              ",\"name\":" + json_string(direction_name(d)) + ",\"args\":{\"bytes\":" + std::to_string(q) + "}}");
      }
    }
  }
  last_sample_ = now;
}

void ChromeTraceRecorder::write_messages() {
  // The records kept to the end (the config's messages and those of traffic workloads
  // until slots are reused), in order of posting, so each lane's slices never cross.
  const MessageTable& table = run_->network().messages();
  const std::size_t kept = std::min<std::size_t>(table.size(), table.recycle_from());
  std::vector<MessageId> ids;
  for (MessageId id = 0; id < kept; ++id) {
    const Message& m = table[id];
    if (m.posted >= 0 && m.posted <= options_.to && m.in_network == InNetwork::kNone) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end(), [&](MessageId a, MessageId b) { return table[a].posted < table[b].posted; });
  const auto lane_for = [](std::vector<Time>& lanes, Time begin, Time end) {
    std::size_t lane = 0;
    while (lane < lanes.size() && lanes[lane] > begin) ++lane;
    if (lane == lanes.size()) lanes.push_back(end);
    lanes[lane] = end;
    return static_cast<int>(lane);
  };
  const Time run_end = run_->sim_time();
  for (MessageId id : ids) {
    const Message& m = table[id];
    const Time end = m.finished >= 0 ? m.finished : m.delivered >= 0 ? m.delivered : run_end;
    const Time begin = std::max(m.posted, options_.from);
    if (end < options_.from || !admit(false)) continue;
    const std::string src = node_name(run_->topology(), NodeRef::host(m.src)), dst = node_name(run_->topology(), NodeRef::host(m.dst));
    EndpointTracks& from = endpoints_[m.src];
    from.named = true;
    const int sent_tid = kSentLaneBase + lane_for(from.sent_lanes, begin, std::min(end, options_.to));
    const std::string serial = std::to_string(m.serial);
    std::string args = "\"message\":" + serial + ",\"bytes\":" + std::to_string(m.bytes) + ",\"source\":" + json_string(src) +
                       ",\"destination\":" + json_string(dst) + ",\"traffic_class\":" + std::to_string(m.traffic_class);
    if (m.delivered >= 0) args += ",\"delivered_us\":" + micros(m.delivered);
    if (m.finished < 0) args += ",\"unfinished\":true";
    const int src_pid = kFirstEndpointPid + static_cast<int>(m.src), dst_pid = kFirstEndpointPid + static_cast<int>(m.dst);
    write("{\"ph\":\"X\",\"pid\":" + std::to_string(src_pid) + ",\"tid\":" + std::to_string(sent_tid) + ",\"ts\":" + micros(begin) +
          ",\"dur\":" + micros(std::min(end, options_.to) - begin) + ",\"name\":" + json_string("message " + serial + " to " + dst) +
          ",\"args\":{" + args + "}}");
    // Its arrival at the destination, tied to the send by a flow arrow: three events, all
    // or none within the bound.
    if (m.delivered < options_.from || m.delivered > options_.to) continue;
    const std::int64_t half = (options_.max_events + 1) / 2;
    if (written_ - written_by_links_ + 3 > half) {
      dropped_ += 3;
      continue;
    }
    written_ += 3;
    EndpointTracks& to = endpoints_[m.dst];
    to.named = true;
    const int received_tid = kReceivedLaneBase + lane_for(to.received_lanes, m.delivered, m.delivered);
    write("{\"ph\":\"X\",\"pid\":" + std::to_string(dst_pid) + ",\"tid\":" + std::to_string(received_tid) + ",\"ts\":" +
          micros(m.delivered) + ",\"dur\":0,\"name\":" + json_string("message " + serial + " from " + src) + ",\"args\":{" + args + "}}");
    write("{\"ph\":\"s\",\"cat\":\"message\",\"name\":\"message\",\"id\":" + serial + ",\"pid\":" + std::to_string(src_pid) +
          ",\"tid\":" + std::to_string(sent_tid) + ",\"ts\":" + micros(begin) + "}");
    write("{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"message\",\"name\":\"message\",\"id\":" + serial + ",\"pid\":" +
          std::to_string(dst_pid) + ",\"tid\":" + std::to_string(received_tid) + ",\"ts\":" + micros(m.delivered) + "}");
  }
}

void ChromeTraceRecorder::finish() {
  if (!out_) return;
  if (sampling_) {
    Simulator& clock = run_->monitor_clock();
    if (scheduled()) {
      clock.cancel(*this);
      clock.retire_monitor();
    }
    const Time end = std::min(run_->sim_time(), options_.to);
    if (end > last_sample_) sample(end);
    for (std::size_t d = 0; d < directions_.size(); ++d) {
      close_period(directions_[d].busy_period, kLinksPid, d, "busy", end);
      close_period(directions_[d].pause_period, kPausesPid, d, "PFC paused", end);
    }
  }
  if (run_->collective() == nullptr && run_->replay() == nullptr && run_->job_count() == 0) write_messages();
  // Names and order of the tracks that have anything on them.
  write(metadata("process_name", kLinksPid, 0, "name", "\"links: busy\""));
  write(metadata("process_name", kPausesPid, 0, "name", "\"links: PFC paused\""));
  write(metadata("process_name", kQueuesPid, 0, "name", "\"links: queue depth (bytes)\""));
  for (std::size_t d = 0; d < directions_.size(); ++d) {
    const DirectionState& st = directions_[d];
    if (!st.named_busy && !st.named_pause) continue;
    const int tid = static_cast<int>(d) + 1;
    if (st.named_busy) write(metadata("thread_name", kLinksPid, tid, "name", json_string(direction_name(d))));
    if (st.named_pause) write(metadata("thread_name", kPausesPid, tid, "name", json_string(direction_name(d))));
  }
  for (std::size_t h = 0; h < endpoints_.size(); ++h) {
    const EndpointTracks& e = endpoints_[h];
    if (!e.named) continue;
    const int pid = kFirstEndpointPid + static_cast<int>(h);
    write(metadata("process_name", pid, 0, "name",
                   json_string("endpoint " + node_name(run_->topology(), NodeRef::host(static_cast<HostId>(h))))));
    write(metadata("process_sort_index", pid, 0, "sort_index", std::to_string(kFirstEndpointPid + h)));
    for (int k = 0; k < 3; ++k) {
      for (std::size_t lane = 0; lane < e.lanes[k].size(); ++lane) {
        const int tid = kLaneBase[k] + static_cast<int>(lane);
        write(metadata("thread_name", pid, tid, "name",
                       json_string(std::string(kLaneName[k]) + (lane > 0 ? " " + std::to_string(lane + 1) : ""))));
        write(metadata("thread_sort_index", pid, tid, "sort_index", std::to_string(tid)));
      }
    }
    for (int k = 0; k < 2; ++k) {
      const std::vector<Time>& lanes = k == 0 ? e.sent_lanes : e.received_lanes;
      for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
        const int tid = (k == 0 ? kSentLaneBase : kReceivedLaneBase) + static_cast<int>(lane);
        write(metadata("thread_name", pid, tid, "name",
                       json_string(std::string(k == 0 ? "messages sent" : "messages received") + (lane > 0 ? " " + std::to_string(lane + 1) : ""))));
        write(metadata("thread_sort_index", pid, tid, "sort_index", std::to_string(tid)));
      }
    }
  }
  *out_ << "\n],\"otherData\":{\"generator\":\"fabricsim\",\"sim_time_ps\":" << run_->sim_time()
        << ",\"link_sample_interval_ps\":" << (sampling_ ? first_interval_ : 0)
        << ",\"link_sample_interval_at_end_ps\":" << (sampling_ ? interval_ : 0) << ",\"link_samples\":" << samples_ << ",\"window_ps\":[" << options_.from
        << "," << (options_.to == INT64_MAX ? run_->sim_time() : options_.to) << "],\"events_written\":" << written_
        << ",\"events_dropped\":" << dropped_ << ",\"links_cut_at_ps\":" << links_cut_at_ << ",\"max_events\":" << options_.max_events << "}}\n";
  out_->close();
  if (!*out_) throw std::runtime_error("cannot write " + options_.path + ".partial");
  out_.reset();
  std::filesystem::rename(options_.path + ".partial", options_.path);
}

}  // namespace fabricsim
