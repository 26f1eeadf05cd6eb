// A run that stopped making progress (app/scenario/progress_watchdog.h): who kept the
// event queue busy, what they wait for, and which messages are left.
#include <algorithm>
#include <map>

#include "app/scenario/scenario.h"
#include "sim/core/units.h"
#include "topologies/compile.h"

namespace fabricsim {

namespace {

constexpr std::uint64_t kObservedEvents = 200'000;  // how long the diagnosis watches
constexpr std::size_t kShown = 8;                   // components and messages listed

// Posted and not yet done with: its sender's last ack (or, with no sender, its delivery) to come.
bool waiting(const Message& m) {
  return m.posted >= 0 && (m.has_sender ? m.finished < 0 : m.awaits_delivery && m.delivered < 0);
}

}  // namespace

std::uint64_t ScenarioRun::messages_waiting() const {
  std::uint64_t count = 0;
  for (const Message& m : network_->messages().all()) {
    if (waiting(m)) ++count;
  }
  if (config_.processes != nullptr && engine_) {
    std::vector<std::int64_t> v{static_cast<std::int64_t>(count)};
    config_.processes->all_sum(v);
    count = static_cast<std::uint64_t>(v[0]);
  }
  return count;
}

std::string ScenarioRun::handler_name(const EventHandler& h) const {
  const auto name = [&](NodeRef n) { return node_name(topology_, n); };
  for (const LinkDirection& d : network_->directions()) {
    const std::string ends = name(d.from) + " -> " + name(d.to);
    if (&h == d.port) {
      std::string state = "egress port " + ends + " (" + std::to_string(d.port->queued_bytes()) + " B queued";
      if (d.port->paused_mask() != 0) state += ", classes paused by PFC: mask " + std::to_string(d.port->paused_mask());
      return state + ")";
    }
    if (&h == d.link) return "link " + ends + " (packets on the wire)";
  }
  for (HostId host = 0; host < network_->host_count(); ++host) {
    const Nic& nic = network_->nic(host);
    if (const char* timer = nic.timer_name(h)) {
      return "endpoint " + name(NodeRef::host(host)) + " " + timer + ": " + nic.waiting_for();
    }
  }
  for (std::uint32_t s = 0; s < topology_.switch_count(); ++s) {
    if (!network_->is_rdma_nic(s)) continue;
    const Nic& nic = network_->rdma_nic(s);
    if (const char* timer = nic.timer_name(h)) return "RDMA NIC " + name(NodeRef::nic(s)) + " " + timer + ": " + nic.waiting_for();
  }
  if (&h == flow_model_.get()) return "the flow model (rates of the flows in progress)";
  if (&h == detector_.get()) return "the PFC deadlock check";
  if (&h == fault_timeline_.get()) return "the fault timeline";
  if (&h == &sampler_) return "the queue sampler";
  for (HostId host = 0; host < schedules_.size(); ++host) {
    if (&h == schedules_[host].get()) return "endpoint " + name(NodeRef::host(host)) + "'s message schedule";
  }
  return "a workload's event handler (order key " + std::to_string(h.order()) + ")";
}

std::optional<StopReason> ScenarioRun::diagnose_no_progress(const Stall& stall, Time until, std::uint64_t events_left) {
  NoProgress d;
  d.reason = stall.reason;
  if (!engine_) {
    // Watch a short stretch more, counting whose events run: the spinning components. If
    // the run moves on meanwhile (time, a delivered byte) or ends, it was not stuck.
    std::map<const EventHandler*, std::uint64_t> count;
    std::uint64_t seen = 0;
    const Time time_before = sim_->now();
    const std::uint64_t delivered_before = delivered_payload();
    const StopReason observed = sim_->run_observed(until, std::min(kObservedEvents, events_left), [&](const EventHandler& h) {
      ++count[&h];
      ++seen;
    });
    if (observed != StopReason::kEventLimit || (stall.frozen ? sim_->now() != time_before : delivered_payload() != delivered_before)) {
      return observed;
    }
    std::vector<std::pair<std::uint64_t, const EventHandler*>> busiest;
    for (const auto& [h, n] : count) busiest.emplace_back(n, h);
    std::sort(busiest.begin(), busiest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; i < std::min(kShown, busiest.size()); ++i) {
      const double share = 100.0 * static_cast<double>(busiest[i].first) / static_cast<double>(std::max<std::uint64_t>(seen, 1));
      char head[32];
      std::snprintf(head, sizeof head, "%5.1f%% of events: ", share);
      d.spinning.push_back(head + handler_name(*busiest[i].second));
    }
  }
  d.at = engine_ ? engine_->last_event_time() : sim_->now();
  for (const Message& m : network_->messages().all()) {
    if (!waiting(m)) continue;
    ++d.messages_left;
    if (d.messages.size() < kShown) {
      d.messages.push_back("message " + std::to_string(m.serial) + " " + node_name(topology_, NodeRef::host(m.src)) + " -> " +
                           node_name(topology_, NodeRef::host(m.dst)) + ", " + std::to_string(m.bytes) + " B, posted at " +
                           format_time(m.posted) + (m.delivered >= 0 ? ", delivered, its last ack not back" : ", not delivered"));
    }
  }
  no_progress_ = std::move(d);
  return std::nullopt;
}

}  // namespace fabricsim
