#include "workloads/traces/replay_program.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fabricsim {

void ReplayProgram::take_rank(Trace& trace) {
  const std::size_t r = slots.size();
  if (r >= static_cast<std::size_t>(trace.ranks)) throw std::logic_error("ReplayProgram: every rank taken already");
  if (r == 0) {
    const auto n = static_cast<std::size_t>(trace.ranks);
    slots.reserve(n);
    rank_children.reserve(n);
    names_algorithm.reserve(n);
  }
  std::vector<TraceOp>& ops = trace.ops[r];
  if (ops.size() > static_cast<std::size_t>(INT32_MAX)) throw std::invalid_argument("rank " + std::to_string(r) + ": more than 2^31 - 1 operations");
  if (lowest_.size() < trace.groups.size()) lowest_.resize(trace.groups.size(), -1);
  std::vector<OpSlot>& st = slots.emplace_back(ops.size());
  bool own_algorithm = false;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TraceOp& op = ops[i];
    st[i].op = op;
    st[i].st.waiting = static_cast<std::int32_t>(trace.deps(static_cast<int>(r), i).size());
    if (op.kind != TraceOpKind::kCollective) continue;
    own_algorithm = own_algorithm || op.algorithm != 0 || op.op == CollectiveOp::kAllToAll || op.op == CollectiveOp::kSendRecv;
    int& lowest = lowest_[op.group];
    if (lowest < 0) {
      const std::vector<int>& group = trace.groups[op.group];
      lowest = group.empty() ? -1 : *std::min_element(group.begin(), group.end());
    }
    if (lowest == static_cast<int>(r)) first_keys.emplace_back(op.key, static_cast<std::uint32_t>(trace.groups[op.group].size()));
  }
  names_algorithm.push_back(own_algorithm);
  // Ids to places: the generator numbers a rank's operations in order, so only other
  // traces need a table (built for one rank at a time).
  bool in_order = true;
  for (std::size_t i = 0; i < ops.size(); ++i) in_order = in_order && ops[i].id == static_cast<int>(i);
  std::unordered_map<int, int> index_of;
  if (!in_order) {
    for (std::size_t i = 0; i < ops.size(); ++i) index_of[ops[i].id] = static_cast<int>(i);
  }
  const auto place = [&](int id) -> std::size_t {
    if (in_order) return static_cast<std::size_t>(id);
    const auto it = index_of.find(id);
    if (it == index_of.end()) throw std::invalid_argument("rank " + std::to_string(r) + ": a dependency on operation " + std::to_string(id) + ", which it does not have");
    return static_cast<std::size_t>(it->second);
  };
  // The rank's children in one array: counted, placed, then filled in dependency order
  // (each op's children in the order of their index).
  std::vector<std::uint32_t>& at = lists_.at;
  at.assign(ops.size() + 1, 0);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    for (int d : trace.deps(static_cast<int>(r), i)) ++at[place(d) + 1];
  }
  for (std::size_t i = 0; i < ops.size(); ++i) at[i + 1] += at[i];
  next_.assign(at.begin(), at.end() - 1);
  lists_.list.resize(at.back());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    for (int d : trace.deps(static_cast<int>(r), i)) lists_.list[next_[place(d)]++] = static_cast<int>(i);
  }
  // Kept once per shape (a collision of the hash is told apart by the comparison).
  const std::size_t hash = Trace::IntsHash{}(lists_.list) ^ lists_.at.size();
  std::uint32_t id = UINT32_MAX;
  for (auto [it, end] = kept_.equal_range(hash); it != end && id == UINT32_MAX; ++it) {
    const ChildLists& kept = child_lists[it->second];
    if (kept.at == lists_.at && kept.list == lists_.list) id = it->second;
  }
  if (id == UINT32_MAX) {
    id = static_cast<std::uint32_t>(child_lists.size());
    kept_.emplace(hash, id);
    child_lists.push_back(lists_);
  }
  rank_children.push_back(id);
  // Turned round into children: the trace's own lists go (`= {}` would keep the capacity).
  std::vector<TraceOp>().swap(ops);
  std::vector<int>().swap(trace.dep_lists[r]);
  if (r < trace.dep_at.size()) std::vector<std::uint32_t>().swap(trace.dep_at[r]);
}

}  // namespace fabricsim
