#include "workloads/traces/replay_program.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "sim/core/hash_mix.h"

namespace fabricsim {

namespace {
// An operation's fields that its program keeps (all but the slot's group, key, peer, tag).
bool same_shared(const TraceOp& a, const TraceOp& b) {
  return a.bytes == b.bytes && std::bit_cast<std::uint64_t>(a.flops) == std::bit_cast<std::uint64_t>(b.flops) && a.id == b.id &&
         a.label == b.label && a.algorithm == b.algorithm && a.process_group == b.process_group && a.kind == b.kind && a.op == b.op;
}

std::size_t hash_shared(const std::vector<TraceOp>& ops) {
  std::uint64_t h = ops.size();
  for (const TraceOp& op : ops) {
    h = hash_mix(h, static_cast<std::uint64_t>(op.bytes));
    h = hash_mix(h, std::bit_cast<std::uint64_t>(op.flops));
    h = hash_mix(h, (static_cast<std::uint64_t>(static_cast<std::uint32_t>(op.id)) << 32) |
                        (std::uint64_t{op.label} << 16) | op.algorithm);
    h = hash_mix(h, (std::uint64_t{op.process_group} << 16) | (static_cast<std::uint64_t>(op.kind) << 8) |
                        static_cast<std::uint64_t>(op.op));
  }
  return hash_finish(h);
}
}  // namespace

TraceOp ReplayProgram::op(int rank, int i) const {
  TraceOp out = shared(rank, i);
  const OpSlot& s = slots[static_cast<std::size_t>(rank)][static_cast<std::size_t>(i)];
  if (out.kind == TraceOpKind::kCollective) {
    out.group = s.who;
    out.key = s.which;
  } else {
    out.peer = static_cast<int>(s.who);
    out.tag = static_cast<int>(s.which);
  }
  return out;
}

std::uint32_t ReplayProgram::keep_program() {
  // Kept once per program (a collision of the hash is told apart by the comparison).
  const std::size_t hash = hash_shared(program_);
  for (auto [it, end] = kept_programs_.equal_range(hash); it != end; ++it) {
    const std::vector<TraceOp>& kept = programs[it->second];
    if (std::equal(kept.begin(), kept.end(), program_.begin(), program_.end(), same_shared)) return it->second;
  }
  const auto id = static_cast<std::uint32_t>(programs.size());
  kept_programs_.emplace(hash, id);
  programs.push_back(program_);
  return id;
}

void ReplayProgram::take_rank(Trace& trace) {
  const std::size_t r = slots.size();
  if (r >= static_cast<std::size_t>(trace.ranks)) throw std::logic_error("ReplayProgram: every rank taken already");
  if (r == 0) {
    const auto n = static_cast<std::size_t>(trace.ranks);
    slots.reserve(n);
    rank_children.reserve(n);
    rank_program.reserve(n);
    names_algorithm.reserve(n);
  }
  std::vector<TraceOp>& ops = trace.ops[r];
  if (ops.size() > static_cast<std::size_t>(INT32_MAX)) throw std::invalid_argument("rank " + std::to_string(r) + ": more than 2^31 - 1 operations");
  if (lowest_.size() < trace.groups.size()) lowest_.resize(trace.groups.size(), -1);
  std::vector<OpSlot>& st = slots.emplace_back(ops.size());
  program_.assign(ops.begin(), ops.end());
  bool own_algorithm = false;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TraceOp& op = ops[i];
    const bool collective = op.kind == TraceOpKind::kCollective;
    st[i].who = collective ? op.group : static_cast<std::uint32_t>(op.peer);
    st[i].which = collective ? op.key : static_cast<std::uint32_t>(op.tag);
    program_[i].group = 0;
    program_[i].key = 0;
    st[i].st.waiting = static_cast<std::int32_t>(trace.deps(static_cast<int>(r), i).size());
    if (!collective) continue;
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
  rank_program.push_back(keep_program());
  // Turned round into children: the trace's own lists go (`= {}` would keep the capacity).
  std::vector<TraceOp>().swap(ops);
  std::vector<int>().swap(trace.dep_lists[r]);
  if (r < trace.dep_at.size()) std::vector<std::uint32_t>().swap(trace.dep_at[r]);
}

}  // namespace fabricsim
