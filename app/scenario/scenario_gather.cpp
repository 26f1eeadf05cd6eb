// ScenarioRun over MPI processes, once the run is over: every process takes what the
// others' partitions counted, so each holds the whole run's state.
#include "app/scenario/scenario.h"

#include "sim/parallel/process_group.h"

namespace fabricsim {

void ScenarioRun::gather_processes() {
  ProcessGroup& group = *config_.processes;
  Network& net = *network_;
  {
    Time last = -1;
    for (std::size_t q = 0; q < partitions_.size(); ++q) {
      if (engine_->owns(q)) last = std::max(last, partitions_[q]->last_work_time());
    }
    std::vector<std::int64_t> v{-last};
    group.all_min(v);
    split_last_work_ = -v[0];
  }
  const Time end = sim_time();
  const std::size_t partitions = net.partition_count();
  const auto owner = [&](NodeRef n) { return partition_owner(net.partition_of(n), partitions, group.size()); };
  const auto& dirs = net.directions();
  const bool sampled = !queue_samples_.empty();
  auto& messages = net.messages();
  // Each process sends what its own partitions ran, in a fixed order; a receiver walks
  // the same order for the sender's rank, so nothing needs naming.
  const int me = group.rank();
  // The messages made before the run (the same table in every process); those made
  // during it (a collective's, a trace's) are counted, each at its sender's process.
  const MessageId kept = std::min<MessageId>(messages.recycle_from(), static_cast<MessageId>(messages.size()));
  const auto write_mine = [&](auto& out) {
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      if (owner(dirs[i].from) != me) continue;
      put(out, dirs[i].port->counters_at(end));
      if (sampled) {
        for (std::int64_t x : queue_samples_[i]) put(out, x);
      }
    }
    for (HostId h = 0; h < net.host_count(); ++h) {
      if (owner(NodeRef::host(h)) == me) put(out, net.nic(h).counters());
    }
    for (std::uint32_t s = 0; s < net.switch_count(); ++s) {
      if (owner(NodeRef::sw(s)) != me) continue;
      put(out, net.switch_at(s).counters());
      if (net.is_rdma_nic(s)) put(out, net.rdma_nic(s).counters());
    }
    for (MessageId id = 0; id < kept; ++id) {
      const Message& m = messages[id];
      if (owner(NodeRef::host(m.src)) == me) {
        put(out, m.posted);
        put(out, m.finished);
      }
      if (owner(NodeRef::host(m.dst)) == me) put(out, m.delivered);
    }
  };
  const Bytes mine = written_once(write_mine);
  for_each_gathered(group, mine, [&](int r, const Bytes& theirs) {
    BytesReader in(theirs);
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      if (owner(dirs[i].from) != r) continue;
      dirs[i].port->adopt_counters(in.get<PortCounters>());
      if (sampled) {
        for (std::int64_t& x : queue_samples_[i]) x = in.get<std::int64_t>();
      }
    }
    for (HostId h = 0; h < net.host_count(); ++h) {
      if (owner(NodeRef::host(h)) == r) net.nic(h).adopt_counters(in.get<NicCounters>());
    }
    for (std::uint32_t s = 0; s < net.switch_count(); ++s) {
      if (owner(NodeRef::sw(s)) != r) continue;
      net.switch_at(s).adopt_counters(in.get<SwitchCounters>());
      if (net.is_rdma_nic(s)) net.rdma_nic(s).adopt_counters(in.get<NicCounters>());
    }
    for (MessageId id = 0; id < kept; ++id) {
      Message& m = messages[id];
      if (owner(NodeRef::host(m.src)) == r) {
        m.posted = in.get<Time>();
        m.finished = in.get<Time>();
      }
      if (owner(NodeRef::host(m.dst)) == r) m.delivered = in.get<Time>();
    }
  });
  {
    std::vector<std::int64_t> v{static_cast<std::int64_t>(messages.created() - kept)};
    group.all_sum(v);
    created_total_ = kept + static_cast<std::uint64_t>(v[0]);
  }
  if (replay_) {
    replay_->pool(group, [&](int rank) { return owner(NodeRef::host(replay_->host_of(rank))); });
  }
  message_log_->pool_finished(kept, &group);
}

}  // namespace fabricsim
