#include "workloads/collective_executor.h"

#include <cmath>
#include <deque>
#include <stdexcept>
#include <tuple>

namespace fabricsim {

CollectiveExecutor::CollectiveExecutor(Network& network, CollectiveProgram program, std::vector<HostId> rank_hosts,
                                       const CollectiveOptions& options)
    : network_(&network), program_(std::move(program)), hosts_(std::move(rank_hosts)), options_(options) {
  if (static_cast<int>(hosts_.size()) != program_.ranks) throw std::invalid_argument("one endpoint per rank needed");
  if (auto problem = check_program(program_, false)) throw std::invalid_argument(*problem);
  const int n = program_.ranks;
  state_.resize(static_cast<std::size_t>(n));
  engines_.resize(static_cast<std::size_t>(n));
  // Match sends to receives in order per (sender, receiver, channel), as check_program does.
  std::map<std::tuple<int, int, int>, std::deque<int>> pending_recvs;
  for (int r = 0; r < n; ++r) {
    const auto& steps = program_.programs[static_cast<std::size_t>(r)].steps;
    auto& st = state_[static_cast<std::size_t>(r)];
    st.resize(steps.size());
    engines_[static_cast<std::size_t>(r)].owner = this;
    engines_[static_cast<std::size_t>(r)].rank = r;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      st[i].waiting = static_cast<int>(steps[i].deps.size());
      for (int d : steps[i].deps) st[static_cast<std::size_t>(d)].children.push_back(static_cast<int>(i));
      if (steps[i].kind == StepKind::kRecv || steps[i].kind == StepKind::kRecvReduce) {
        ++st[i].waiting;  // for the data
        pending_recvs[{steps[i].peer, r, steps[i].channel}].push_back(static_cast<int>(i));
      }
    }
    steps_left_ += static_cast<std::int64_t>(steps.size());
  }
  for (int r = 0; r < n; ++r) {
    const auto& steps = program_.programs[static_cast<std::size_t>(r)].steps;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].kind != StepKind::kSend) continue;
      auto& queue = pending_recvs[{r, steps[i].peer, steps[i].channel}];
      const int j = queue.front();
      queue.pop_front();
      state_[static_cast<std::size_t>(r)][i].match_rank = steps[i].peer;
      state_[static_cast<std::size_t>(r)][i].match_step = j;
      state_[static_cast<std::size_t>(steps[i].peer)][static_cast<std::size_t>(j)].match_rank = r;
      state_[static_cast<std::size_t>(steps[i].peer)][static_cast<std::size_t>(j)].match_step = static_cast<int>(i);
    }
  }
  if (options_.check_data) data_.emplace(program_);
}

void CollectiveExecutor::start() {
  started_ = network_->sim().now();
  if (steps_left_ == 0) {
    finished_ = started_;
    if (on_done_) on_done_();
    return;
  }
  for (int r = 0; r < program_.ranks; ++r) {
    for (std::size_t i = 0; i < state_[static_cast<std::size_t>(r)].size(); ++i) {
      if (state_[static_cast<std::size_t>(r)][i].waiting == 0) ready(r, static_cast<int>(i));
    }
  }
}

Time CollectiveExecutor::compute_time(const Step& s) const {
  if (options_.reduce_bytes_per_second <= 0) return 0;
  const double bytes = static_cast<double>(s.count) * static_cast<double>(program_.slot_bytes);
  return static_cast<Time>(std::ceil(bytes / options_.reduce_bytes_per_second * 1e12));
}

void CollectiveExecutor::ready(int rank, int step) {
  StepState& st = state_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(step)];
  if (st.started) return;
  st.started = true;
  start_step(rank, step);
}

void CollectiveExecutor::start_step(int rank, int step) {
  const Step& s = program_.programs[static_cast<std::size_t>(rank)].steps[static_cast<std::size_t>(step)];
  switch (s.kind) {
    case StepKind::kSend: {
      const std::int64_t bytes = static_cast<std::int64_t>(s.count) * program_.slot_bytes;
      const MessageId id = network_->add_message(hosts_[static_cast<std::size_t>(rank)],
                                                 hosts_[static_cast<std::size_t>(s.peer)], bytes, options_.traffic_class);
      send_of_[id] = {rank, step};
      {
        const StepState& st = state_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(step)];
        recv_of_[id] = {st.match_rank, st.match_step};
      }
      ++messages_unfinished_;
      network_->dispatcher().assign(id, this);
      if (data_) {
        const StepState& st = state_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(step)];
        payload_[{st.match_rank, st.match_step}] = data_->read(rank, s.src, s.count);
      }
      network_->post(id);
      break;
    }
    case StepKind::kRecv:
    case StepKind::kRecvReduce:
      if (data_ && !data_error_) {
        auto it = payload_.find({rank, step});
        if (auto e = data_->write(rank, s.dst, it->second, s.kind == StepKind::kRecvReduce)) data_error_ = *e;
        payload_.erase(it);
      }
      if (s.kind == StepKind::kRecvReduce && options_.reduce_bytes_per_second > 0) {
        enqueue_compute(rank, step);
      } else {
        finish_step(rank, step);
      }
      break;
    case StepKind::kCopy:
    case StepKind::kReduce:
      if (data_ && !data_error_) {
        if (auto e = data_->local(rank, s)) data_error_ = *e;
      }
      if (options_.reduce_bytes_per_second > 0) {
        enqueue_compute(rank, step);
      } else {
        finish_step(rank, step);
      }
      break;
    case StepKind::kNop: finish_step(rank, step); break;
  }
}

void CollectiveExecutor::enqueue_compute(int rank, int step) {
  ComputeEngine& e = engines_[static_cast<std::size_t>(rank)];
  e.queue.push_back(step);
  if (!e.scheduled()) {
    network_->sim().schedule_in(e, compute_time(program_.programs[static_cast<std::size_t>(rank)].steps[static_cast<std::size_t>(step)]));
  }
}

void CollectiveExecutor::ComputeEngine::on_event() {
  const int step = queue[head++];
  if (head < queue.size()) {
    owner->network_->sim().schedule_in(
        *this, owner->compute_time(owner->program_.programs[static_cast<std::size_t>(rank)].steps[static_cast<std::size_t>(queue[head])]));
  } else {
    queue.clear();
    head = 0;
  }
  owner->finish_step(rank, step);
}

void CollectiveExecutor::finish_step(int rank, int step) {
  for (int c : state_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(step)].children) {
    if (--state_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(c)].waiting == 0) ready(rank, c);
  }
  if (--steps_left_ == 0) {
    finished_ = network_->sim().now();
    if (data_ && !data_error_) data_error_ = data_->verify();
    if (on_done_) on_done_();
  }
}

void CollectiveExecutor::on_message_sent(MessageId id, Time) {
  // At the sender, from its own NIC: the data has left, so the send step is done.
  const auto it = send_of_.find(id);
  if (it == send_of_.end()) return;
  const auto [rank, step] = it->second;
  send_of_.erase(it);
  finish_step(rank, step);
}

void CollectiveExecutor::on_message_delivered(MessageId id, Time) {
  // At the receiver: the data is here, so the matching receive may run. Which receive
  // step it is travels with the message (worked out from the program before the run).
  const auto it = recv_of_.find(id);
  if (it == recv_of_.end()) return;
  const auto [peer, recv] = it->second;
  recv_of_.erase(it);
  if (--state_[static_cast<std::size_t>(peer)][static_cast<std::size_t>(recv)].waiting == 0) ready(peer, recv);
}

void CollectiveExecutor::on_message_finished(MessageId, Time) { --messages_unfinished_; }

}  // namespace fabricsim
