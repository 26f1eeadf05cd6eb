#include "workloads/traces/trace_replay.h"

#include <cmath>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

namespace fabricsim {

namespace {
PreparedTrace prepare(Trace trace, bool generated) {
  if (!generated) {
    if (std::string problem = check_trace(trace); !problem.empty()) throw std::invalid_argument(problem);
  }
  PreparedTrace out;
  for (int r = 0; r < trace.ranks; ++r) out.program.take_rank(trace);
  out.trace = std::move(trace);
  return out;
}
}  // namespace

TraceReplay::TraceReplay(Network& network, Trace trace, std::vector<HostId> rank_hosts, ReplayOptions options)
    : TraceReplay(network, prepare(std::move(trace), options.generated), std::move(rank_hosts), std::move(options)) {}

TraceReplay::TraceReplay(Network& network, PreparedTrace prepared, std::vector<HostId> rank_hosts, ReplayOptions options)
    : network_(&network), trace_(std::move(prepared.trace)), hosts_(std::move(rank_hosts)), options_(std::move(options)),
      program_(std::move(prepared.program)) {
  if (static_cast<int>(hosts_.size()) != trace_.ranks) throw std::invalid_argument("one endpoint per trace rank needed");
  if (program_.ranks() != trace_.ranks) throw std::logic_error("TraceReplay: a program of " + std::to_string(program_.ranks()) + " ranks for a trace of " + std::to_string(trace_.ranks));
  trace_.drop_indexes();  // the lookups built it; running needs only the tables
  if (!options_.ideal_network) check_algorithms();
  const auto n = static_cast<std::size_t>(trace_.ranks);
  streams_.resize(n);
  ranks_.resize(n);
  agents_.resize(n);
  split_ = network_->partition_count() > 1;
  for (std::size_t r = 0; r < n; ++r) {
    ComputeStream& stream = streams_[r];
    stream.owner = this;
    stream.rank = static_cast<int>(r);
    stream.sim = &network_->partition(network_->host_partition(hosts_[r]));
    stream.left = static_cast<std::int32_t>(program_.slots[r].size());
    ranks_[r].owner = this;
    ranks_[r].rank = static_cast<int>(r);
    agents_[r].owner = this;
    agents_[r].rank = static_cast<int>(r);
    stream.set_order(network_->next_order_key());
    ranks_[r].set_order(network_->next_order_key());
    if (hosts_[r] >= rank_of_host_.size()) rank_of_host_.resize(static_cast<std::size_t>(hosts_[r]) + 1, -1);
    rank_of_host_[hosts_[r]] = static_cast<int>(r);
  }
  // Over MPI processes a remote sender names its message's receiver by key.
  if (network_->over_processes()) {
    for (RankAgent& a : agents_) network_->register_observer(&a);
  }
  // Each collective's handlers get their order keys now, from its lowest member's op:
  // the same whenever, and on whichever thread, it is launched.
  first_key_.assign(trace_.keys.size(), 0);
  for (const auto& [key, members] : program_.first_keys) {
    first_key_[key] = network_->next_order_key();
    for (std::size_t k = 1; k < 2 * static_cast<std::size_t>(members); ++k) network_->next_order_key();
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>>().swap(program_.first_keys);
  // From here a collective is known by its key's index alone: the names go (4.8 million
  // tensor-parallel ones at 100,000 GPUs, a few hundred MB).
  std::vector<std::string>().swap(trace_.keys);
  // A group in one unit (links shorter than the fabric's longest: a DGX node) is in one
  // partition however the run is split; a group across units hears that its last member
  // arrived one notice later.
  notice_ = network_->longest_latency();
}

bool TraceReplay::one_unit(const std::vector<int>& group) const {
  const std::vector<std::uint32_t>& unit = options_.host_unit;
  if (unit.empty()) return group.size() <= 1;
  for (int member : group) {
    if (unit[hosts_[static_cast<std::size_t>(member)]] != unit[hosts_[static_cast<std::size_t>(group.front())]]) return false;
  }
  return true;
}

std::size_t TraceReplay::operation_count() const {
  std::size_t n = 0;
  for (const auto& ops : program_.slots) n += ops.size();
  return n;
}


bool TraceReplay::done() const {
  for (const ComputeStream& r : streams_) {
    if (r.left != 0) return false;
  }
  return true;
}

Time TraceReplay::iteration_time() const {
  Time last = started_;
  for (const ComputeStream& r : streams_) last = std::max(last, r.finished);
  return last - started_;
}

void TraceReplay::check_algorithms() const {
  // Every collective's algorithm must do its operation for its group on these endpoints
  // (a group, operation and algorithm checked once, on a small size): a refusal now is
  // a config error, later it would stop the run halfway. Programs are built once per
  // (algorithm, operation, size); only those that reduce in the network depend on where
  // the members are, and are kept to check each group against.
  std::map<std::tuple<std::string, int, int>, std::optional<CollectiveProgram>> in_network;
  std::set<std::tuple<std::string, int, std::vector<int>>> seen;
  // A rank whose collectives all take the default, when that is `auto` or the ring, has
  // nothing to check (the same tests as below, found as the rank was taken).
  const bool default_fits = options_.default_algorithm == "auto" || options_.default_algorithm == "ring";
  for (int r = 0; r < trace_.ranks; ++r) {
    if (default_fits && !program_.names_algorithm[static_cast<std::size_t>(r)]) continue;
    for (int i = 0; i < static_cast<int>(operation_count(r)); ++i) {
      if (program_.shared(r, i).kind != TraceOpKind::kCollective) continue;
      const TraceOp op = program_.op(r, i);
      const std::string& algorithm = op.algorithm == 0 ? options_.default_algorithm : trace_.algorithm(op);
      if (algorithm == "auto") continue;  // the tuner picks only what fits
      // The ring does these for any group of two or more on any channels, so its program
      // (steps growing with ranks squared: 39 million for 1,562 ranks on 8 channels) is
      // not built to know that.
      if (algorithm == "ring" && op.op != CollectiveOp::kAllToAll && op.op != CollectiveOp::kSendRecv) continue;
      const std::vector<int>& group = trace_.group(op);
      const auto where = [&] { return "rank " + std::to_string(r) + " operation " + std::to_string(op.id) + " (" + algorithm + "): "; };
      const int n = static_cast<int>(group.size());
      auto [built, fresh] = in_network.try_emplace({algorithm, static_cast<int>(op.op), n});
      if (fresh) {
        AlgorithmParams params = options_.params;
        params.local_size = std::min<int>(params.local_size, n);
        if (n % std::max(1, params.local_size) != 0) params.local_size = n;
        try {
          CollectiveProgram program = build_collective(algorithm, op.op, n, 1 << 20, params);
          if (uses_in_network(program)) built->second = std::move(program);
        } catch (const std::invalid_argument& e) {
          throw std::invalid_argument(where() + e.what());
        }
      }
      if (!built->second || !seen.insert({algorithm, static_cast<int>(op.op), group}).second) continue;
      std::vector<HostId> hosts;
      for (int member : group) hosts.push_back(hosts_[static_cast<std::size_t>(member)]);
      if (auto problem = CollectiveExecutor::in_network_problem(*network_, *built->second, hosts)) {
        throw std::invalid_argument(where() + *problem);
      }
    }
  }
}

void TraceReplay::start_at(Time at) {
  started_ = at;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    streams_[r].finished = at;
    streams_[r].sim->schedule_at(ranks_[r], at);
  }
}

void TraceReplay::RankStart::on_event() {
  const std::vector<OpSlot>& ops = owner->program_.slots[static_cast<std::size_t>(rank)];
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].st.waiting == 0) owner->ready(rank, static_cast<int>(i));
  }
}

void TraceReplay::ready(int rank, int i) {
  OpState& st = slot(rank, i).st;
  st.waiting = kReady;
  if (program_.shared(rank, i).kind == TraceOpKind::kCompute) {
    try_compute(rank);  // (needs nothing of the rank's own: no whole operation made)
    return;
  }
  const TraceOp op = program_.op(rank, i);
  const Time now = streams_[static_cast<std::size_t>(rank)].sim->now();
  switch (op.kind) {
    case TraceOpKind::kCompute: break;  // (above)
    case TraceOpKind::kCollective: {
      st.start = now;
      std::unique_lock<std::mutex> lock(mutex_);
      const std::vector<int>& group = trace_.group(op);
      if (split_ && !options_.ideal_network && !one_unit(group)) {
        // Its other members may be on other threads, or in other processes, and past now:
        // it is launched between windows, one notice after its last member's arrival.
        arrivals_.push_back({now, rank, i});
        break;
      }
      auto& pending = collectives_[op.key];
      pending.members.emplace_back(rank, i);
      if (pending.members.size() < group.size()) break;
      PendingCollective all = std::move(pending);
      collectives_.erase(op.key);
      if (options_.ideal_network) {
        lock.unlock();
        for (const auto& [r, k] : all.members) finish(r, k);
        break;
      }
      const Launched e = launch_collective(std::move(all));
      lock.unlock();
      if (one_unit(group)) {
        e.start(now);  // every member is here, on this partition: it starts now, as NCCL's kernels do
      } else {
        e.start_at(now + notice_);  // the word that all are here crosses the fabric
      }
      break;
    }
    case TraceOpKind::kSend: {
      st.start = now;
      RankAgent& peer = agents_[static_cast<std::size_t>(op.peer)];
      if (options_.ideal_network) {
        peer.from_peer[{rank, op.tag}].data.push_back({now, now});
        finish(rank, i);
        peer.match({rank, op.tag});
        break;
      }
      Network::MessageSpec spec;
      spec.src = hosts_[static_cast<std::size_t>(rank)];
      spec.dst = hosts_[static_cast<std::size_t>(op.peer)];
      spec.bytes = std::max<std::int64_t>(1, op.bytes);
      spec.traffic_class = options_.collective.traffic_class;
      spec.tag = static_cast<std::uint32_t>(op.tag);  // travels with the data
      const MessageId id = network_->add_message(spec);
      RankAgent& self = agents_[static_cast<std::size_t>(rank)];
      self.sends[id] = i;
      network_->dispatcher().assign(id, &self, &peer);
      network_->post(id);
      break;
    }
    case TraceOpKind::kRecv: {
      st.start = now;
      RankAgent& self = agents_[static_cast<std::size_t>(rank)];
      self.from_peer[{op.peer, op.tag}].recvs.push_back(i);
      self.match({op.peer, op.tag});
      break;
    }
  }
}

void TraceReplay::RankAgent::match(const std::pair<int, int>& from) {
  FromPeer& q = from_peer[from];
  ++matching;
  while (q.data_taken < q.data.size() && q.recvs_taken < q.recvs.size()) {
    // A receive communicates from when its data started moving, not from when it was
    // posted: waiting for the sender (a pipeline bubble) is idle time, not transfer.
    const Time sent = q.data[q.data_taken++].first;
    const int op = q.recvs[q.recvs_taken++];
    OpState& st = owner->slot(rank, op).st;
    st.start = std::max(st.start, sent);
    owner->finish(rank, op);  // (may match again, even from this sender: `q` stays, its vectors may grow)
  }
  // Nothing waiting from this sender and tag: its queues go (a rank sees 2 x micro-batches
  // tags per pipeline peer, and empty queues kept for each cost more than its operations),
  // but not while an outer match, further up this stack, still holds them.
  if (--matching == 0 && q.idle()) from_peer.erase(from);
}

void TraceReplay::RankAgent::on_message_delivered(MessageId id, Time now) {
  // From my own NIC: data from a peer. Who sent it, its tag and when its send started
  // travel with the message; I read nothing of the sender's.
  const Message& m = owner->network_->messages()[id];
  const int sender = m.src < owner->rank_of_host_.size() ? owner->rank_of_host_[m.src] : -1;
  if (sender < 0) throw std::logic_error("a message delivered from a host that runs no rank");
  const std::pair<int, int> from{sender, static_cast<int>(m.tag)};
  from_peer[from].data.push_back({m.posted, now});
  match(from);
}

void TraceReplay::RankAgent::on_message_sent(MessageId id, Time) {
  // From my own NIC: the data has left, so the send is done.
  const auto it = sends.find(id);
  if (it == sends.end()) return;
  const int op = it->second;
  sends.erase(it);
  owner->finish(rank, op);
}

void TraceReplay::between_windows(ProcessGroup* group) {
  std::vector<Arrival> arrivals = std::move(arrivals_);
  arrivals_.clear();
  if (group != nullptr) arrivals = all_gather_items(*group, arrivals);
  std::sort(arrivals.begin(), arrivals.end(), [](const Arrival& a, const Arrival& b) {
    return std::tie(a.at, a.rank, a.op) < std::tie(b.at, b.rank, b.op);
  });
  std::vector<PendingCollective> complete;
  for (const Arrival& a : arrivals) {
    const TraceOp op = program_.op(a.rank, a.op);
    PendingCollective& pending = collectives_[op.key];
    pending.members.emplace_back(a.rank, a.op);
    pending.arrived = std::max(pending.arrived, a.at);
    if (pending.members.size() < trace_.group(op).size()) continue;
    complete.push_back(std::move(pending));
    collectives_.erase(op.key);
  }
  for (PendingCollective& c : complete) {
    const Time at = c.arrived + notice_;
    launch_collective(std::move(c)).start_at(at);
  }
  std::erase_if(executors_, [](const std::unique_ptr<CollectiveExecutor>& e) { return e->idle(); });
}

void TraceReplay::pool(ProcessGroup& group, const std::function<int(int rank)>& owner) {
  breakdown_kept_ = false;
  const int me = group.rank();
  const auto write_mine = [&](auto& out) {
    for (int r = 0; r < trace_.ranks; ++r) {
      if (owner(r) != me) continue;
      const ComputeStream& rs = streams_[static_cast<std::size_t>(r)];
      put(out, static_cast<std::int64_t>(rs.left));
      put(out, rs.finished);
      for (const OpSlot& s : program_.slots[static_cast<std::size_t>(r)]) {
        put(out, s.st.start);
        put(out, s.st.end);
      }
    }
  };
  const Bytes mine = written_once(write_mine);
  for_each_gathered(group, mine, [&](int p, const Bytes& theirs) {
    BytesReader in(theirs);
    for (int r = 0; r < trace_.ranks; ++r) {
      if (owner(r) != p) continue;
      ComputeStream& rs = streams_[static_cast<std::size_t>(r)];
      rs.left = static_cast<std::int32_t>(in.get<std::int64_t>());
      rs.finished = in.get<Time>();
      for (OpSlot& s : program_.slots[static_cast<std::size_t>(r)]) {
        s.st.start = in.get<Time>();
        s.st.end = in.get<Time>();
      }
    }
  });
}

void TraceReplay::Launched::start(Time now) const {
  if (executor != nullptr) {
    executor->start();
  } else {
    ring->start_at(now);
  }
}

void TraceReplay::Launched::start_at(Time at) const {
  if (executor != nullptr) {
    executor->start_at(at);
  } else {
    ring->start_at(at);
  }
}

TraceReplay::Launched TraceReplay::launch_collective(PendingCollective pending) {
  const auto [rank0, op0] = pending.members.front();
  const TraceOp op = program_.op(rank0, op0);
  const std::vector<int>& group = trace_.group(op);
  const int n = static_cast<int>(group.size());
  const std::int64_t bytes = std::max<std::int64_t>(1, op.bytes);
  // A trace's groups repeat their collectives thousands of times: tuned once per kind.
  auto [tuned, fresh_tuning] = tuned_.try_emplace(TunedKey{op.group, static_cast<int>(op.op), bytes, op.algorithm});
  // Member k of the collective is group[k]: which of its ops this is.
  // (A generated trace lists its groups in rank order: a binary search, not a scan per
  // member, which a DP group of 1,562 made 1.2 M compares a collective.)
  std::vector<std::pair<int, int>> by_position(static_cast<std::size_t>(n));
  const bool sorted = std::is_sorted(group.begin(), group.end());
  for (const auto& [r, i] : pending.members) {
    const auto at = sorted ? std::lower_bound(group.begin(), group.end(), r) : std::find(group.begin(), group.end(), r);
    by_position[static_cast<std::size_t>(at - group.begin())] = {r, i};
  }
  if (tuned->second.ring_on_hosts != nullptr) return launch_ring(tuned->second, std::move(by_position), op.key);
  std::vector<HostId> hosts;
  for (int member : group) hosts.push_back(hosts_[static_cast<std::size_t>(member)]);
  const std::string& named = op.algorithm == 0 ? options_.default_algorithm : trace_.algorithm(op);
  if (fresh_tuning) {
    if (options_.tune) {
      tuned->second.tuning = options_.tune(op.op, named, bytes, hosts);
    } else {
      tuned->second.tuning.algorithm = named == "auto" ? "ring" : named;
    }
  }
  const CollectiveTuning& tuning = tuned->second.tuning;
  const std::string& algorithm = tuning.algorithm;
  AlgorithmParams params = options_.params;
  if (tuning.channels > 0) params.channels = tuning.channels;
  if (tuning.chunk_bytes > 0) params.chunk_bytes = tuning.chunk_bytes;
  params.p2p_channels = tuning.p2p_channels;
  if (const CollectiveAlgorithm* a = find_collective_algorithm(algorithm); a != nullptr && a->nvls_start) {
    params.start_latency_ps = options_.nvls_latency_ps;
  }
  params.local_size = std::min<int>(params.local_size, n);
  if (n % std::max(1, params.local_size) != 0) params.local_size = n;
  // A group whose members all sit in one node runs NCCL's tree as that node's chain.
  if (!options_.host_node.empty()) {
    params.one_node = std::all_of(hosts.begin(), hosts.end(),
                                  [&](HostId h) { return options_.host_node[h] == options_.host_node[hosts.front()]; });
  }
  CollectiveOptions options = options_.collective;
  const bool costed = tuning.costs != NcclCosts{};
  const auto member_node = [&] {  // NCCL's step latencies: inside a node or across
    std::vector<std::uint32_t> nodes;
    if (costed && !options_.host_node.empty()) {
      for (HostId h : hosts) nodes.push_back(options_.host_node[h]);
    }
    return nodes;
  };
  if (first_key_[op.key] != 0) options.first_order_key = first_key_[op.key];
  const auto one_domain = [&] {
    // Asked of the whole network once per group (a trace's groups repeat thousands of times).
    const auto [it, fresh] = one_domain_.try_emplace(op.group, false);
    if (fresh) it->second = network_->can_reduce_in_network(hosts);
    return it->second;
  };
  if (network_->merges_equal_sends() && algorithm == "ring" && params.channels > 1 && params.channels <= UINT16_MAX &&
      one_domain()) {
    // Flows, inside one NVSwitch domain: every channel's ring crosses the same GPU links
    // and the same switch layer, and max-min gives their equal sends equal rates, so one
    // ring whose sends each stand for `channels` sends runs the same (with 1/channels of
    // the flows). Across nodes channels take different NICs, and stay apart.
    options.flow_shares = static_cast<std::uint16_t>(params.channels);
    if (params.chunk_bytes > 0) params.chunk_bytes *= params.channels;  // the same pieces per ring
    params.channels = 1;
  }
  const bool couple = options_.coupled_rings == CoupledRings::kEvery ||
                      (options_.coupled_rings == CoupledRings::kInNode && options.flow_shares > 1);
  if (couple && network_->merges_equal_sends() && algorithm == "ring" &&
      options.reduce_bytes_per_second == 0 && options.activity == nullptr && !options.check_data &&
      (op.op == CollectiveOp::kAllReduce || op.op == CollectiveOp::kAllGather || op.op == CollectiveOp::kReduceScatter)) {
    // Worked out from the ring order, not from the program (its steps grow with ranks
    // squared), once per kind.
    auto [shape, fresh] =
        ring_shapes_.try_emplace({static_cast<int>(op.op), n, bytes, params.channels, params.chunk_bytes, params.local_size});
    if (fresh) {
      shape->second.rings = CoupledRing::rings_for(op.op, n, bytes, params);
      // (Costs and fit read the rings' edges and pieces, which folding leaves as they were.)
      shape->second.shares = CoupledRing::fold_equal(shape->second.rings);
    }
    const std::vector<CoupledRing::Ring>& shaped = shape->second.rings;
    if (!shaped.empty() && !tuned->second.ring_costs) {
      tuned->second.ring_costs = costed ? coupled_ring_costs(tuning.costs, shaped, member_node()) : CoupledRing::Costs{};
    }
    if (!shaped.empty() && coupled_ring_fits(shaped, *tuned->second.ring_costs)) {
      // Every later one of this kind is the same ring on the same endpoints.
      tuned->second.ring_on_hosts = std::make_shared<const std::vector<CoupledRing::Ring>>(CoupledRing::on_hosts(shaped, hosts));
      // (Channels folded already, inside one NVSwitch domain, leave one ring: shares 1.)
      tuned->second.ring_shares = static_cast<std::uint16_t>(std::max<int>(options.flow_shares, shape->second.shares));
      return launch_ring(tuned->second, std::move(by_position), op.key);
    }
  }
  // A trace repeats a few collectives thousands of times: each kind is built and checked once.
  const PreparedKey kind{algorithm, static_cast<int>(op.op), n, bytes, params.channels, params.chunk_bytes,
                        params.root, params.local_size, params.start_latency_ps, tuning.costs, params.one_node,
                        params.p2p_channels};
  auto& prepared = prepared_[kind];
  if (!prepared) {
    CollectiveProgram program = build_collective(algorithm, op.op, n, bytes, params);
    if (costed) apply_nccl_costs(program, tuning.costs);
    prepared = PreparedCollective::prepare(std::move(program));
  }
  if (costed) options.rank_node = member_node();
  auto executor = std::make_unique<CollectiveExecutor>(*network_, prepared, std::move(hosts), options);
  CollectiveExecutor* e = executor.get();
  executors_.push_back(std::move(executor));
  // Each member goes on when its own part is done (its own NCCL kernel ends), on its own
  // partition; the whole collective's end only frees it.
  e->set_on_rank_done([this, by_position = std::move(by_position)](int k, Time) {
    const auto [r, i] = by_position[static_cast<std::size_t>(k)];
    finish(r, i);
  });
  e->set_on_done([this] { finished_collectives_.fetch_add(1, std::memory_order_relaxed); });
  Launched launched;
  launched.executor = e;
  return launched;
}

TraceReplay::Launched TraceReplay::launch_ring(Tuned& kind, std::vector<std::pair<int, int>> by_position, std::uint32_t key) {
  auto ring = std::make_unique<CoupledRing>(*network_, kind.ring_on_hosts, kind.ring_shares, options_.collective.traffic_class,
                                            [this, members = std::move(by_position)](Time) {
                                              finish_members(members);
                                              finished_collectives_.fetch_add(1, std::memory_order_relaxed);
                                            });
  const std::uint32_t order = first_key_[key] != 0 ? first_key_[key] : options_.collective.first_order_key;
  if (order != 0) ring->set_order(order);
  ring->set_costs(*kind.ring_costs);
  ring->reuse_routes(&kind.ring_routes);
  Launched launched;
  launched.ring = ring.get();
  rings_.push_back(std::move(ring));
  return launched;
}

void TraceReplay::try_compute(int rank) {
  ComputeStream& s = streams_[static_cast<std::size_t>(rank)];
  const std::vector<TraceOp>& ops = program_.program(rank);
  if (s.running >= 0) return;
  while (s.next < ops.size() && ops[s.next].kind != TraceOpKind::kCompute) ++s.next;
  if (s.next == ops.size()) return;
  const int i = static_cast<int>(s.next);
  OpState& st = slot(rank, i).st;
  if (!st.ready()) return;  // in order: the head waits for its dependencies
  ++s.next;
  s.running = i;
  Simulator& sim = *s.sim;
  st.start = sim.now();
  Time duration = trace_.compute_time(ops[static_cast<std::size_t>(i)]);
  if (static_cast<std::size_t>(rank) < options_.compute_scale.size()) {
    duration = static_cast<Time>(std::llround(static_cast<double>(duration) * options_.compute_scale[static_cast<std::size_t>(rank)]));
  }
  sim.schedule_in(s, duration);
}

void TraceReplay::ComputeStream::on_event() {
  // Called from the event loop, so no collective is on the stack: free the finished ones
  // (a split run does so between windows).
  if (!owner->split_) owner->reap_collectives();
  const int i = running;
  running = -1;
  owner->finish(rank, i);
  owner->try_compute(rank);
}

void TraceReplay::ComputeStream::prefetch() const {
  __builtin_prefetch(&owner->program_.slots[static_cast<std::size_t>(rank)]);
}

void TraceReplay::ComputeStream::prefetch_next() const {
  if (running >= 0) __builtin_prefetch(&owner->slot(rank, running), 1);
}

void TraceReplay::ComputeStream::prefetch_last() const {
  if (running >= 0) owner->prefetch_children(rank, running);
}

void TraceReplay::reap_collectives() {
  if (finished_collectives_ == 0) return;
  std::erase_if(executors_, [](const std::unique_ptr<CollectiveExecutor>& e) { return e->idle(); });
  std::erase_if(rings_, [](const std::unique_ptr<CoupledRing>& r) { return r->idle(); });
  std::size_t done = 0;
  for (const auto& e : executors_) done += e->done() ? 1 : 0;  // (acks still due)
  for (const auto& r : rings_) done += r->done() ? 1 : 0;
  finished_collectives_ = done;
}

void TraceReplay::report(int rank, int i) const {
  const OpState& st = slot(rank, i).st;
  const TraceOp op = program_.op(rank, i);
  const HostId host = hosts_[static_cast<std::size_t>(rank)];
  if (op.kind == TraceOpKind::kCompute) {
    activity_->on_activity(host, Activity::kCompute, op.label == 0 ? "compute" : trace_.label(op), st.start, st.end, ActivityDetail{});
    return;
  }
  std::string what = op.kind == TraceOpKind::kCollective ? std::string(op_name(op.op))
                     : op.kind == TraceOpKind::kSend     ? "send to rank " + std::to_string(op.peer)
                                                         : "recv from rank " + std::to_string(op.peer);
  what += " " + std::to_string(op.bytes) + " B";
  if (op.label != 0) what += " (" + trace_.label(op) + ")";
  activity_->on_activity(host, Activity::kCommunication, what, st.start, st.end, ActivityDetail{op.bytes, op.kind == TraceOpKind::kCollective ? -1 : op.peer, i, -1});
}

void TraceReplay::finish_members(const std::vector<std::pair<int, int>>& members) {
  // A DP ring's end finishes 1,562 ranks' operations, each a rank's stream and operation line
  // away from the last: asked for a few members ahead, their misses overlap the work.
  constexpr std::size_t kAhead = 4;
  const auto ask = [&](std::size_t k) {
    const auto [r, i] = members[k];
    __builtin_prefetch(&streams_[static_cast<std::size_t>(r)], 1);
    __builtin_prefetch(&slot(r, i), 1);
    prefetch_children(r, i);
  };
  for (std::size_t k = 0; k < std::min(kAhead, members.size()); ++k) ask(k);
  for (std::size_t k = 0; k < members.size(); ++k) {
    if (k + kAhead < members.size()) ask(k + kAhead);
    finish(members[k].first, members[k].second);
  }
}

void TraceReplay::finish(int rank, int i) {
  OpState& st = slot(rank, i).st;
  ComputeStream& mine = streams_[static_cast<std::size_t>(rank)];
  const Time now = mine.sim->now();
  st.end = now;
  if (st.start < 0) st.start = now;
  mine.finished = std::max(mine.finished, now);
  --mine.left;
  if (activity_ != nullptr) report(rank, i);
  prefetch_children(rank, i);
  OpSlot* ops = program_.slots[static_cast<std::size_t>(rank)].data();
  for (int c : children(rank, i)) {
    if (--ops[c].st.waiting == 0) ready(rank, c);
  }
}

void TraceReplay::prefetch_children(int rank, int i) const {
  // Cold (a line each per operation at 100,000 ranks): asked for together, so their
  // misses overlap rather than follow each other.
  const OpSlot* ops = program_.slots[static_cast<std::size_t>(rank)].data();
  for (int c : children(rank, i)) __builtin_prefetch(&ops[c], 1);
}

namespace {
using Intervals = std::vector<std::pair<Time, Time>>;
// Sorts `v` (compute comes in order already) and merges its overlapping intervals in place.
void merge(Intervals& v) {
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
  std::size_t out = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto iv = v[i];
    if (iv.second <= iv.first) continue;
    if (out > 0 && iv.first <= v[out - 1].second) {
      v[out - 1].second = std::max(v[out - 1].second, iv.second);
    } else {
      v[out++] = iv;
    }
  }
  v.resize(out);
}
Time length(const Intervals& v) {
  Time t = 0;
  for (const auto& iv : v) t += iv.second - iv.first;
  return t;
}
// Length of `a` not covered by `b` (both merged).
Time uncovered(const Intervals& a, const Intervals& b) {
  Time covered = 0;
  std::size_t j = 0;
  for (const auto& iv : a) {
    while (j < b.size() && b[j].second <= iv.first) ++j;
    for (std::size_t k = j; k < b.size() && b[k].first < iv.second; ++k) {
      covered += std::min(iv.second, b[k].second) - std::max(iv.first, b[k].first);
    }
  }
  return length(a) - covered;
}
}  // namespace

const std::vector<RankBreakdown>& TraceReplay::breakdown() const {
  // Worked out once the step is done (results and the summary both read it: seconds at
  // 100,000 ranks); until then, afresh each time.
  if (!breakdown_kept_) {
    breakdown_ = work_out_breakdown();
    breakdown_kept_ = done();
  }
  return breakdown_;
}

std::vector<RankBreakdown> TraceReplay::work_out_breakdown() const {
  std::vector<RankBreakdown> out(static_cast<std::size_t>(trace_.ranks));
  // Communication is grouped by label number, not by name (a string per operation at
  // 100,000 ranks); an unlabelled one counts as "other", with any operation so named.
  const auto named_other = std::find(trace_.names.begin(), trace_.names.end(), "other");
  const std::size_t other = named_other == trace_.names.end() ? 0 : static_cast<std::size_t>(named_other - trace_.names.begin());
  const std::string other_name = "other";
  std::vector<Intervals> by_label(trace_.names.size());
  std::vector<std::size_t> labels;  // those with intervals for this rank
  Intervals compute, comm;
  for (int r = 0; r < trace_.ranks; ++r) {
    compute.clear();
    comm.clear();
    for (std::size_t l : labels) by_label[l].clear();
    labels.clear();
    RankBreakdown& b = out[static_cast<std::size_t>(r)];
    const std::vector<OpSlot>& slots = program_.slots[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < slots.size(); ++i) {
      const OpState& st = slots[i].st;
      const TraceOp& op = program_.shared(r, static_cast<int>(i));
      if (st.end < 0) continue;
      b.finish = std::max(b.finish, st.end - started_);
      if (op.kind == TraceOpKind::kCompute) {
        compute.emplace_back(st.start, st.end);
      } else {
        comm.emplace_back(st.start, st.end);
        const std::size_t l = op.label == 0 ? other : op.label;
        if (by_label[l].empty()) labels.push_back(l);
        by_label[l].emplace_back(st.start, st.end);
      }
    }
    merge(compute);
    merge(comm);
    b.compute = length(compute);
    b.communication = length(comm);
    b.exposed = uncovered(comm, compute);
    for (std::size_t l : labels) {
      Intervals& m = by_label[l];
      merge(m);
      const std::string& name = l == 0 ? other_name : trace_.names[l];
      b.communication_by_label[name] = length(m);
      b.exposed_by_label[name] = uncovered(m, compute);
    }
  }
  return out;
}

}  // namespace fabricsim
