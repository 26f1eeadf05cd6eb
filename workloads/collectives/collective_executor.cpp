#include "workloads/collectives/collective_executor.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <stdexcept>
#include <tuple>

namespace fabricsim {

std::shared_ptr<const PreparedCollective> PreparedCollective::prepare(CollectiveProgram program) {
  auto p = std::make_shared<PreparedCollective>();
  if (auto problem = check_program(program, false, &p->matching)) throw std::invalid_argument(*problem);
  const auto n = static_cast<std::size_t>(program.ranks);
  p->waiting.resize(n);
  p->children.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const auto& steps = program.programs[r].steps;
    p->waiting[r].resize(steps.size());
    p->children[r].resize(steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
      p->waiting[r][i] = static_cast<int>(steps[i].deps.size());
      for (int d : steps[i].deps) p->children[r][static_cast<std::size_t>(d)].push_back(static_cast<int>(i));
      if (receives_data(steps[i].kind)) ++p->waiting[r][i];  // for the data (a sum: the switch's one delivery)
    }
  }
  p->program = std::move(program);
  return p;
}

CollectiveExecutor::CollectiveExecutor(Network& network, CollectiveProgram program, std::vector<HostId> rank_hosts,
                                       const CollectiveOptions& options)
    : CollectiveExecutor(network, PreparedCollective::prepare(std::move(program)), std::move(rank_hosts), options) {}

CollectiveExecutor::CollectiveExecutor(Network& network, std::shared_ptr<const PreparedCollective> prepared,
                                       std::vector<HostId> rank_hosts, const CollectiveOptions& options)
    : network_(&network), prepared_(std::move(prepared)), program_(prepared_->program), options_(options) {
  if (static_cast<int>(rank_hosts.size()) != program_.ranks) throw std::invalid_argument("one endpoint per rank needed");
  const int n = program_.ranks;
  agents_.resize(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    RankAgent& a = agents_[static_cast<std::size_t>(r)];
    a.owner = this;
    a.rank = r;
    a.host = rank_hosts[static_cast<std::size_t>(r)];
    a.engine.agent = &a;
    a.starter.agent = &a;
    if (options_.first_order_key != 0) {
      a.engine.set_order(options_.first_order_key + 2 * static_cast<std::uint32_t>(r));
      a.starter.set_order(options_.first_order_key + 2 * static_cast<std::uint32_t>(r) + 1);
    } else {
      a.engine.set_order(network_->next_order_key());
      a.starter.set_order(network_->next_order_key());
    }
    const auto& waiting = prepared_->waiting[static_cast<std::size_t>(r)];
    a.sim = &network_->partition(network_->host_partition(a.host));
    a.steps.resize(waiting.size());
    for (std::size_t i = 0; i < waiting.size(); ++i) a.steps[i].waiting = waiting[i];
    a.steps_left = static_cast<std::int64_t>(waiting.size());
    if (a.steps_left > 0) {
      ranks_left_.fetch_add(1, std::memory_order_relaxed);
      ++ranks_with_steps_;
      if (network_->local_host(a.host)) local_ranks_left_.fetch_add(1, std::memory_order_relaxed);
    }
    // Over processes a remote sender names its message's receiver by key.
    if (network_->over_processes()) network_->register_observer(&a);
  }
  if (uses_in_network(program_)) {
    // NVLink SHARP: each group's ranks must hang off one switch layer that reduces and
    // copies; its multicast group is set up now (as NCCL does at communicator creation).
    if (auto problem = in_network_problem(*network_, program_, rank_hosts)) throw std::invalid_argument(*problem);
    const std::vector<bool> named = in_network_groups_named(program_);
    in_network_groups_.resize(named.size());
    for (int g = -1; g + 1 < static_cast<int>(named.size()); ++g) {
      // Groups no step names (NVLS-tree's all-ranks group) need no multicast group.
      if (!named[static_cast<std::size_t>(g + 1)]) continue;
      InNetworkGroup& ig = in_network_groups_[static_cast<std::size_t>(g + 1)];
      ig.ranks = program_.group_members(g);
      std::vector<HostId> hosts;
      for (int r : ig.ranks) hosts.push_back(rank_hosts[static_cast<std::size_t>(r)]);
      for (HostId h : hosts) {
        // A group's sums and copies meet in its switches, in one partition's memory.
        if (network_->host_partition(h) != network_->host_partition(hosts.front())) {
          throw std::invalid_argument(program_.name + "'s in-network group " + std::to_string(g) +
                                      " spans partitions of a split run; expected its ranks on one node");
        }
      }
      if (const auto id = network_->multicast_group(hosts)) ig.multicast = *id;
    }
  }
  if (options_.check_data) data_.emplace(program_);
}

std::optional<std::string> CollectiveExecutor::in_network_problem(const Network& network, const CollectiveProgram& program,
                                                                  const std::vector<HostId>& rank_hosts) {
  // Only the groups the steps name must reduce (NVLS-tree's are its nodes, not all ranks).
  const std::vector<bool> used = in_network_groups_named(program);
  for (int g = -1; g < static_cast<int>(program.groups.size()); ++g) {
    if (!used[static_cast<std::size_t>(g + 1)]) continue;
    std::vector<HostId> hosts;
    for (int r : program.group_members(g)) hosts.push_back(rank_hosts[static_cast<std::size_t>(r)]);
    if (!network.can_reduce_in_network(hosts)) {
      return program.name + " needs every rank" + (g >= 0 ? " of a group (group " + std::to_string(g) + ")" : std::string()) +
             " linked to switches that reduce in the network (an NVSwitch with `nvls: {bandwidth: ...}`, as the "
             "dgx_h100 preset has); these ranks are not" +
             (program.name == "nvls" ? std::string(" (across nodes, nvls_tree runs NVLS inside each node)") : std::string());
    }
  }
  return std::nullopt;
}

void CollectiveExecutor::start_at(Time at) {
  started_ = at;
  if (ranks_left_.load() == 0 && !on_rank_done_) {
    finished_ = started_;
    if (on_done_ && !defer_done_) on_done_();
    return;
  }
  // A rank with nothing to do still starts, to say so (on_rank_done).
  for (RankAgent& a : agents_) {
    if (a.steps_left > 0 || on_rank_done_) a.sim->schedule_at(a.starter, at + program_.start_latency_ps);
  }
}

CollectiveExecutor::~CollectiveExecutor() {
  if (network_->over_processes()) {
    for (const RankAgent& a : agents_) network_->unregister_observer(&a);
  }
}

bool CollectiveExecutor::quiescent() const {
  if (!idle()) return false;
  for (const RankAgent& a : agents_) {
    if (a.engine.scheduled() || a.starter.scheduled()) return false;
  }
  return true;
}

Time CollectiveExecutor::local_finished() const {
  Time last = -1;
  for (const RankAgent& a : agents_) last = std::max(last, a.finished);
  return last;
}

Time CollectiveExecutor::finished_at() const {
  if (finished_ >= 0) return finished_;
  if (!done()) return -1;
  return std::max(started_, local_finished());
}

void CollectiveExecutor::start() {
  started_ = agents_.empty() ? network_->sim().now() : agents_.front().sim->now();
  if (ranks_left_.load() == 0) {
    finished_ = started_;
    if (on_rank_done_) {
      for (const RankAgent& a : agents_) on_rank_done_(a.rank, started_);
    }
    if (on_done_) on_done_();
    return;
  }
  for (RankAgent& a : agents_) {
    if (program_.start_latency_ps > 0) {
      // Each rank starts after the fixed start-up cost, from an event of its own.
      a.sim->schedule_in(a.starter, program_.start_latency_ps);
    } else {
      a.starter.begun = true;  // later due steps schedule it
      a.begin();
    }
  }
}

void CollectiveExecutor::Starter::on_event() {
  if (!begun) {
    begun = true;
    agent->begin();
  } else {
    const Time now = agent->sim->now();
    while (!due.empty() && due.begin()->first <= now) {
      const int what = due.begin()->second;
      due.erase(due.begin());
      if (what < 0) {
        agent->start_step(-what - 1);
      } else {
        agent->arrived(what);
      }
    }
  }
  if (!due.empty() && !scheduled()) {
    next = due.begin()->first;
    agent->sim->schedule_at(*this, next);
  }
}

void CollectiveExecutor::RankAgent::begin() {
  if (steps.empty()) {
    if (owner->on_rank_done_) owner->on_rank_done_(rank, sim->now());
    return;
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].waiting == 0) ready(static_cast<int>(i));
  }
}

std::uint16_t nccl_network_connection(int connection, int queue_pairs, std::uint32_t nth) {
  const int qps = std::max(1, queue_pairs);
  return static_cast<std::uint16_t>(1 + connection * qps + static_cast<int>(nth % static_cast<std::uint32_t>(qps)));
}

Time CollectiveExecutor::compute_time(const Step& s) const {
  if (options_.reduce_bytes_per_second <= 0) return 0;
  const double bytes = static_cast<double>(s.count) * static_cast<double>(program_.slot_bytes);
  return static_cast<Time>(std::ceil(bytes / options_.reduce_bytes_per_second * 1e12));
}

void CollectiveExecutor::rank_finished(Time now) {
  local_ranks_left_.fetch_sub(1, std::memory_order_acq_rel);
  if (ranks_left_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // The last rank: a split run asks done() between windows instead (other threads'
  // ranks may still be inside this window's events).
  if (defer_done_) return;
  finished_ = now;
  if (data_ && !data_error_) data_error_ = data_->verify();
  if (on_done_) on_done_();
}

void CollectiveExecutor::RankAgent::ready(int step) {
  StepState& st = steps[static_cast<std::size_t>(step)];
  if (st.started) return;
  st.started = true;
  st.began = sim->now();
  start_step(step);
}

bool CollectiveExecutor::RankAgent::wait_for_proxy(int step) {
  const CollectiveExecutor& x = *owner;
  StepState& st = steps[static_cast<std::size_t>(step)];
  const auto& node = x.options_.rank_node;
  if (x.program_.proxy_op_ps <= 0 || st.proxied || node.empty()) return false;
  const int peer = x.feeds(rank, step)[0].rank;
  if (node[static_cast<std::size_t>(rank)] == node[static_cast<std::size_t>(peer)]) return false;
  st.proxied = true;
  const Time now = sim->now();
  const Time at = std::max(now, proxy_free);
  proxy_free = at + x.program_.proxy_op_ps;
  if (at == now) return false;
  due_at(at, -step - 1);
  return true;
}

void CollectiveExecutor::RankAgent::due_at(Time at, int what) {
  starter.due.emplace(at, what);
  if (starter.begun && (!starter.scheduled() || at < starter.next)) {
    starter.next = at;
    sim->schedule_at(starter, at);
  }
}

void CollectiveExecutor::RankAgent::start_step(int step) {
  CollectiveExecutor& x = *owner;
  const Step& s = x.program_.programs[static_cast<std::size_t>(rank)].steps[static_cast<std::size_t>(step)];
  if (s.kind == StepKind::kSend && wait_for_proxy(step)) return;
  switch (s.kind) {
    case StepKind::kSend:
    case StepKind::kSwitchReduce:
    case StepKind::kMulticast: {
      const std::int64_t payload = static_cast<std::int64_t>(s.count) * x.program_.slot_bytes;
      const std::int64_t bytes = x.program_.wire_factor == 1.0
                                     ? payload
                                     : static_cast<std::int64_t>(std::ceil(static_cast<double>(payload) * x.program_.wire_factor));
      const std::vector<StepRef>& to = x.feeds(rank, step);
      MessageId id = 0;
      // In-network sums and copies are shared by their group's members.
      std::unique_lock<std::mutex> in_network(x.in_network_mutex_, std::defer_lock);
      if (s.kind != StepKind::kSend) in_network.lock();
      if (s.kind == StepKind::kSend) {
        RankAgent& peer = x.agents_[static_cast<std::size_t>(to[0].rank)];
        Network::MessageSpec spec;
        spec.src = host;
        spec.dst = peer.host;
        spec.bytes = bytes;
        spec.traffic_class = x.options_.traffic_class;
        spec.tag = static_cast<std::uint32_t>(to[0].step);  // the receive it feeds
        spec.shares = x.options_.flow_shares;
        // A GPU's channel copies into its peer's memory at the channel's rate; across nodes the
        // NIC, one per channel, is the channel's limit.
        const auto& node = x.options_.rank_node;
        const bool same_node = node.empty() || node[static_cast<std::size_t>(rank)] == node[static_cast<std::size_t>(to[0].rank)];
        if (same_node) spec.rate_cap_bps = x.program_.channel_bytes_per_second * x.program_.wire_factor * 8;
        // Its NCCL connection (0 is point-to-point's); between nodes, the connection's next
        // queue pair in turn.
        const int per = x.program_.streams_per_connection;
        const int group = per > 0 ? s.channel / per : 0;
        const int connection = x.program_.connections > 0 ? group % x.program_.connections : group;
        const int qps = std::max(1, x.program_.queue_pairs_per_connection);
        std::uint32_t nth = 0;
        if (qps > 1 && !same_node) {
          if (network_sends.size() <= static_cast<std::size_t>(connection)) network_sends.resize(static_cast<std::size_t>(connection) + 1);
          nth = network_sends[static_cast<std::size_t>(connection)]++;
        }
        spec.connection = nccl_network_connection(connection, qps, nth);
        id = x.network_->add_message(spec);
        x.network_->dispatcher().assign(id, this, &peer);
      } else if (s.kind == StepKind::kSwitchReduce && s.peer == kAllMembers) {
        // SHARP: the first contribution opens the sum at every member (its receives).
        const InNetworkGroup& group = x.in_network_group(s.group);
        auto [sum, fresh] = x.all_sums_.try_emplace(to[0]);
        if (fresh) {
          std::vector<MessageId> receives;
          sum->second.number = x.network_->open_sum_for_all(group.multicast, bytes, x.options_.traffic_class, receives);
          for (std::size_t q = 0; q < receives.size(); ++q) {
            x.network_->set_tag(receives[q], static_cast<std::uint32_t>(to[q].step));
            x.network_->dispatcher().assign(receives[q], nullptr, &x.agents_[static_cast<std::size_t>(to[q].rank)]);
          }
        }
        const auto me = std::find(group.ranks.begin(), group.ranks.end(), rank) - group.ranks.begin();
        const HostId via = x.agents_[static_cast<std::size_t>(group.ranks[static_cast<std::size_t>(me + 1) % group.ranks.size()])].host;
        id = x.network_->add_contribution_for_all(host, group.multicast, sum->second.number, via, bytes, x.options_.traffic_class);
        x.network_->dispatcher().assign(id, this, nullptr);
        if (++sum->second.made == group.ranks.size()) x.all_sums_.erase(sum);
      } else if (s.kind == StepKind::kSwitchReduce) {
        RankAgent& peer = x.agents_[static_cast<std::size_t>(to[0].rank)];
        auto [slot, fresh] = x.sum_slots_.try_emplace(to[0], Network::kNoSum);
        const InNetworkGroup& group = x.in_network_group(s.group);
        // The owner may be this rank: the contribution leaves toward another member.
        HostId via = peer.host;
        if (via == host) {
          const auto me = std::find(group.ranks.begin(), group.ranks.end(), rank) - group.ranks.begin();
          via = x.agents_[static_cast<std::size_t>(group.ranks[static_cast<std::size_t>(me + 1) % group.ranks.size()])].host;
        }
        id = x.network_->add_contribution(host, peer.host, via, static_cast<std::uint16_t>(group.ranks.size()), bytes,
                                          x.options_.traffic_class, &slot->second);
        x.network_->set_tag(id, static_cast<std::uint32_t>(to[0].step));
        x.network_->dispatcher().assign(id, this, &peer);
      } else {
        std::vector<MessageId> receives;
        id = x.network_->add_multicast(host, x.in_network_group(s.group).multicast, bytes, x.options_.traffic_class, receives);
        x.network_->dispatcher().assign(id, this, nullptr);
        for (std::size_t q = 0; q < receives.size(); ++q) {
          x.network_->set_tag(receives[q], static_cast<std::uint32_t>(to[q].step));
          x.network_->dispatcher().assign(receives[q], nullptr, &x.agents_[static_cast<std::size_t>(to[q].rank)]);
        }
      }
      if (s.kind != StepKind::kSend) {
        // The piece's address: where its slot starts in the buffer, in packets, as NVLink
        // interleaves by address, so a piece that is not whole packets continues the stripe
        // where the one before it stopped rather than restarting in step with the chips.
        Message& m = x.network_->messages()[id];
        const std::int64_t mtu = std::max<std::int64_t>(1, x.network_->params().nic.mtu);
        m.stripe_base = static_cast<std::uint32_t>(static_cast<std::int64_t>(s.src) * x.program_.slot_bytes / mtu);
      }
      if (in_network.owns_lock()) in_network.unlock();
      sends[id] = step;
      x.messages_unfinished_.fetch_add(1, std::memory_order_acq_rel);
      if (x.data_) {
        const std::lock_guard<std::mutex> lock(x.data_mutex_);  // (ranks on several threads)
        for (const StepRef& target : to) {
          if (x.data_error_) break;
          if (auto e = deliver(x.payload_, target, x.data_->read(rank, s.src, s.count), s.kind == StepKind::kSwitchReduce)) {
            x.data_error_ = *e;
          }
        }
      }
      x.network_->post(id);
      break;
    }
    case StepKind::kRecv:
    case StepKind::kRecvReduce:
    case StepKind::kRecvSum:
      if (s.kind == StepKind::kRecvSum) {
        const std::lock_guard<std::mutex> lock(x.in_network_mutex_);
        x.sum_slots_.erase({rank, step});
      }
      if (x.data_) {
        const std::lock_guard<std::mutex> lock(x.data_mutex_);
        if (!x.data_error_) {
          auto it = x.payload_.find({rank, step});
          if (auto e = x.data_->write(rank, s.dst, it->second, s.kind == StepKind::kRecvReduce)) x.data_error_ = *e;
          x.payload_.erase(it);
        }
      }
      if (s.kind == StepKind::kRecvReduce && x.options_.reduce_bytes_per_second > 0) {
        enqueue_compute(step);
      } else {
        finish_step(step);
      }
      break;
    case StepKind::kCopy:
    case StepKind::kReduce:
      if (x.data_) {
        const std::lock_guard<std::mutex> lock(x.data_mutex_);
        if (!x.data_error_) {
          if (auto e = x.data_->local(rank, s)) x.data_error_ = *e;
        }
      }
      if (x.options_.reduce_bytes_per_second > 0) {
        enqueue_compute(step);
      } else {
        finish_step(step);
      }
      break;
    case StepKind::kNop: finish_step(step); break;
  }
}

void CollectiveExecutor::report_step(const RankAgent& agent, int step) const {
  const Time now = agent.sim->now();
  const Time began = agent.steps[static_cast<std::size_t>(step)].began;
  if (now == began) return;  // receives without a reduce, nops: nothing to see
  const Step& s = program_.programs[static_cast<std::size_t>(agent.rank)].steps[static_cast<std::size_t>(step)];
  const std::int64_t bytes = static_cast<std::int64_t>(s.count) * program_.slot_bytes;
  std::string what;
  switch (s.kind) {
    case StepKind::kSend: what = "send to rank " + std::to_string(s.peer); break;
    case StepKind::kSwitchReduce: what = "switch reduce"; break;
    case StepKind::kMulticast: what = "multicast"; break;
    case StepKind::kRecv: what = "recv from rank " + std::to_string(s.peer); break;
    case StepKind::kRecvReduce: what = "recv+reduce from rank " + std::to_string(s.peer); break;
    case StepKind::kRecvSum: what = "recv sum"; break;
    case StepKind::kCopy: what = "copy"; break;
    case StepKind::kReduce: what = "reduce"; break;
    case StepKind::kNop: what = "wait"; break;
  }
  what += " ch" + std::to_string(s.channel) + " " + std::to_string(bytes) + " B";
  const bool has_peer = s.kind == StepKind::kSend || s.kind == StepKind::kRecv || s.kind == StepKind::kRecvReduce;
  options_.activity->on_activity(agent.host, Activity::kStep, what, began, now,
                                 ActivityDetail{bytes, has_peer ? s.peer : -1, step, s.channel});
}

void CollectiveExecutor::RankAgent::enqueue_compute(int step) {
  engine.queue.push_back(step);
  if (!engine.scheduled()) {
    sim->schedule_in(
        engine, owner->compute_time(owner->program_.programs[static_cast<std::size_t>(rank)].steps[static_cast<std::size_t>(step)]));
  }
}

void CollectiveExecutor::ComputeEngine::on_event() {
  const int step = queue[head++];
  CollectiveExecutor& x = *agent->owner;
  if (head < queue.size()) {
    agent->sim->schedule_in(
        *this, x.compute_time(x.program_.programs[static_cast<std::size_t>(agent->rank)].steps[static_cast<std::size_t>(queue[head])]));
  } else {
    queue.clear();
    head = 0;
  }
  agent->finish_step(step);
}

void CollectiveExecutor::RankAgent::finish_step(int step) {
  if (owner->options_.activity != nullptr) {
    owner->report_step(*this, step);
    if (--steps_left == 0) {
      owner->options_.activity->on_activity(host, Activity::kCommunication,
                                            std::string(op_name(owner->program_.op)) + " " + owner->program_.name,
                                            owner->started_, sim->now(), ActivityDetail{});
    }
  } else {
    --steps_left;
  }
  const bool last = steps_left == 0;  // (a child finishing at once comes back here first)
  for (int c : owner->prepared_->children[static_cast<std::size_t>(rank)][static_cast<std::size_t>(step)]) {
    if (--steps[static_cast<std::size_t>(c)].waiting == 0) ready(c);
  }
  if (last) {
    finished = sim->now();
    if (owner->on_rank_done_) owner->on_rank_done_(rank, finished);
    owner->rank_finished(finished);
  }
}

void CollectiveExecutor::RankAgent::on_message_sent(MessageId id, Time) {
  // From my own NIC: the data has left, so my send step is done.
  const auto it = sends.find(id);
  if (it == sends.end()) return;
  const int step = it->second;
  sends.erase(it);
  finish_step(step);
}

void CollectiveExecutor::RankAgent::on_message_delivered(MessageId id, Time now) {
  // From my own NIC: data for one of my receives is here; the message's tag says which.
  const int recv = static_cast<int>(owner->network_->messages()[id].tag);
  const CollectiveProgram& p = owner->program_;
  Time at = now;
  if (p.step_sync_ps[0] != 0 || p.step_sync_ps[1] != 0) {
    const int peer = p.programs[static_cast<std::size_t>(rank)].steps[static_cast<std::size_t>(recv)].peer;
    const auto& node = owner->options_.rank_node;
    const bool across = peer >= 0 && !node.empty() && node[static_cast<std::size_t>(rank)] != node[static_cast<std::size_t>(peer)];
    // NCCL's flag (and, between nodes, its proxy) tells my kernel a little later.
    at = now + p.step_sync_ps[across ? 1 : 0];
  }
  if (at <= now) {
    arrived(recv);
    return;
  }
  due_at(at, recv);
}

void CollectiveExecutor::RankAgent::arrived(int recv) {
  if (--steps[static_cast<std::size_t>(recv)].waiting == 0) ready(recv);
}

void CollectiveExecutor::RankAgent::on_message_finished(MessageId, Time) {
  owner->messages_unfinished_.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace fabricsim
