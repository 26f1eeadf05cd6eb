#include <optional>
#include "workloads/collectives/collective_data.h"

#include "workloads/collectives/collective_matching.h"

#include <algorithm>
#include <bit>
#include <deque>
#include <map>
#include <tuple>

namespace fabricsim {

int ContributionSet::merge(const ContributionSet& other) {
  int duplicate = -1;
  for (std::size_t w = 0; w < words_.size(); ++w) {
    const std::uint64_t both = words_[w] & other.words_[w];
    if (both != 0 && duplicate < 0) duplicate = static_cast<int>(w * 64) + std::countr_zero(both);
    words_[w] |= other.words_[w];
  }
  return duplicate;
}

bool ContributionSet::empty() const {
  for (std::uint64_t w : words_) {
    if (w != 0) return false;
  }
  return true;
}

std::string ContributionSet::describe(int ranks) const {
  std::string s = "{";
  for (int r = 0; r < ranks; ++r) {
    if (has(r)) s += (s.size() > 1 ? "," : "") + std::to_string(r);
  }
  return s + "}";
}

DataState::DataState(const CollectiveProgram& p)
    : program_(&p), slots_(static_cast<std::size_t>(p.ranks) * static_cast<std::size_t>(p.slots), ContributionSet(p.ranks)) {
  const int n = p.ranks;
  const int m = n > 0 ? p.chunks / n : 0;
  for (int r = 0; r < n; ++r) {
    if (p.input_is_own_segment) {
      for (int c = 0; c < m; ++c) slot(r, p.input_offset + c).add(r);
      continue;
    }
    for (int c = 0; c < p.chunks; ++c) {
      ContributionSet& s = slot(r, p.input_offset + c);
      switch (p.op) {
        case CollectiveOp::kAllReduce:
        case CollectiveOp::kReduceScatter:
        case CollectiveOp::kReduce:
        case CollectiveOp::kAllToAll: s.add(r); break;
        case CollectiveOp::kAllGather:
          if (c / m == r) s.add(r);
          break;
        case CollectiveOp::kBroadcast:
        case CollectiveOp::kSendRecv:
          if (r == p.root) s.add(r);
          break;
      }
    }
  }
}

std::vector<ContributionSet> DataState::read(int rank, int first, int count) const {
  std::vector<ContributionSet> out;
  for (int i = 0; i < count; ++i) out.push_back(slot(rank, first + i));
  return out;
}

std::optional<std::string> DataState::write(int rank, int first, const std::vector<ContributionSet>& data, bool reduce) {
  for (std::size_t i = 0; i < data.size(); ++i) {
    ContributionSet& s = slot(rank, first + static_cast<int>(i));
    if (!reduce) {
      s = data[i];
      continue;
    }
    const int dup = s.merge(data[i]);
    if (dup >= 0) {
      return "rank " + std::to_string(rank) + " slot " + std::to_string(first + static_cast<int>(i)) +
             ": contribution of rank " + std::to_string(dup) + " reduced twice";
    }
  }
  return std::nullopt;
}

std::optional<std::string> DataState::local(int rank, const Step& step) {
  if (step.kind != StepKind::kCopy && step.kind != StepKind::kReduce) return std::nullopt;
  return write(rank, step.dst, read(rank, step.src, step.count), step.kind == StepKind::kReduce);
}

std::optional<std::string> DataState::verify() const {
  const CollectiveProgram& p = *program_;
  const int n = p.ranks;
  const int m = n > 0 ? p.chunks / n : 0;
  ContributionSet all(n);
  for (int r = 0; r < n; ++r) all.add(r);
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < p.chunks; ++c) {
      ContributionSet want(n);
      bool checked = true;
      switch (p.op) {
        case CollectiveOp::kAllReduce: want = all; break;
        case CollectiveOp::kReduceScatter: checked = c / m == r; want = all; break;
        case CollectiveOp::kAllGather: want.add(c / m); break;
        case CollectiveOp::kBroadcast: want.add(p.root); break;
        case CollectiveOp::kReduce: checked = r == p.root; want = all; break;
        case CollectiveOp::kAllToAll: want.add(c / m); break;  // output slot s*m+j on rank r holds s's data
        case CollectiveOp::kSendRecv: checked = r == (p.root + 1) % n; want.add(p.root); break;
      }
      if (!checked) continue;
      const int at = p.output_is_own_segment ? c - r * m : c;
      const ContributionSet& got = slot(r, p.output_offset + at);
      if (!(got == want)) {
        return "rank " + std::to_string(r) + " chunk " + std::to_string(c) + " holds " + got.describe(n) +
               ", expected " + want.describe(n);
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> deliver(std::map<StepRef, std::vector<ContributionSet>>& in_flight, StepRef to,
                                   std::vector<ContributionSet> data, bool add) {
  auto [it, fresh] = in_flight.try_emplace(to);
  if (fresh || !add) {
    it->second = std::move(data);
    return std::nullopt;
  }
  // One more contribution to an in-switch sum.
  for (std::size_t k = 0; k < data.size(); ++k) {
    const int dup = it->second[k].merge(data[k]);
    if (dup >= 0) return "the in-switch sum for rank " + std::to_string(to.rank) + " step " + std::to_string(to.step) +
                         " gets rank " + std::to_string(dup) + "'s contribution twice";
  }
  return std::nullopt;
}

std::optional<std::string> check_program(const CollectiveProgram& p, bool check_data, ProgramMatching* matching) {
  const int n = p.ranks;
  if (static_cast<int>(p.programs.size()) != n) return "expected one program per rank";
  // The buffers the data model fills and checks: every rank's input and output chunks lie
  // within its slots, and a share per rank (AllGather, ReduceScatter, AllToAll) is a chunk or more.
  const bool shares = p.op == CollectiveOp::kAllGather || p.op == CollectiveOp::kReduceScatter || p.op == CollectiveOp::kAllToAll;
  if (p.chunks < 1 || (shares && p.chunks < n)) {
    return std::to_string(p.chunks) + " chunks for " + std::to_string(n) + " ranks: expected " + (shares ? "one per rank or more" : "at least one");
  }
  const int input = p.input_is_own_segment ? p.chunks / n : p.chunks;
  const int output = p.output_is_own_segment ? p.chunks / n : p.chunks;
  if (p.input_offset < 0 || static_cast<std::int64_t>(p.input_offset) + input > p.slots) {
    return "the input's " + std::to_string(input) + " chunks from slot " + std::to_string(p.input_offset) + " do not fit a rank's " +
           std::to_string(p.slots) + " slots";
  }
  if (p.output_offset < 0 || static_cast<std::int64_t>(p.output_offset) + output > p.slots) {
    return "the output's " + std::to_string(output) + " chunks from slot " + std::to_string(p.output_offset) + " do not fit a rank's " +
           std::to_string(p.slots) + " slots";
  }
  // Slots, peers and dependencies in range.
  for (int r = 0; r < n; ++r) {
    const auto& steps = p.programs[static_cast<std::size_t>(r)].steps;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Step& s = steps[i];
      const auto where = [&] { return "rank " + std::to_string(r) + " step " + std::to_string(i); };
      const bool reads = sends_data(s.kind) || s.kind == StepKind::kCopy || s.kind == StepKind::kReduce;
      const bool writes = receives_data(s.kind) || s.kind == StepKind::kCopy || s.kind == StepKind::kReduce;
      if (s.count < 1) return where() + ": count must be at least 1";
      if (reads && (s.src < 0 || s.src + s.count > p.slots)) return where() + ": source slots out of range";
      if (writes && (s.dst < 0 || s.dst + s.count > p.slots)) return where() + ": destination slots out of range";
      const bool talks = s.kind == StepKind::kSend || s.kind == StepKind::kRecv || s.kind == StepKind::kRecvReduce;
      // A receive from itself is a multicast's copy (matching refuses any other).
      const bool self_ok = s.kind == StepKind::kRecv;
      if (talks && (s.peer < 0 || s.peer >= n || (s.peer == r && !self_ok))) return where() + ": peer out of range";
      if (s.kind == StepKind::kSwitchReduce && s.peer != kAllMembers && (s.peer < 0 || s.peer >= n)) return where() + ": peer out of range";
      const bool in_network = s.kind == StepKind::kSwitchReduce || s.kind == StepKind::kRecvSum || s.kind == StepKind::kMulticast;
      if (in_network) {
        if (s.group < -1 || s.group >= static_cast<int>(p.groups.size())) return where() + ": group out of range";
        const std::vector<int> members = p.group_members(s.group);
        const auto member = [&](int x) { return std::find(members.begin(), members.end(), x) != members.end(); };
        if (!member(r)) return where() + ": rank " + std::to_string(r) + " is not in its group";
        if (s.kind == StepKind::kSwitchReduce && s.peer != kAllMembers && !member(s.peer)) return where() + ": the sum's owner is not in the group";
      }
      for (int d : s.deps) {
        if (d < 0 || d >= static_cast<int>(steps.size()) || d == static_cast<int>(i)) return where() + ": dependency out of range";
      }
    }
  }
  auto matched = match_program(p);
  if (auto* problem = std::get_if<std::string>(&matched)) return *problem;
  const ProgramMatching& match = std::get<ProgramMatching>(matched);
  // Kahn's algorithm over dependencies plus send -> receive edges; runs the data
  // symbolically in the same order. A rank's steps' children (the steps that depend on
  // them) lie in one array, step i's from child_begin[i] on.
  std::vector<std::vector<int>> remaining(static_cast<std::size_t>(n));
  std::vector<std::vector<std::uint32_t>> child_begin(static_cast<std::size_t>(n));
  std::vector<std::vector<int>> child_list(static_cast<std::size_t>(n));
  std::size_t total = 0;
  for (int r = 0; r < n; ++r) {
    const auto& steps = p.programs[static_cast<std::size_t>(r)].steps;
    auto& begin = child_begin[static_cast<std::size_t>(r)];
    auto& list = child_list[static_cast<std::size_t>(r)];
    remaining[static_cast<std::size_t>(r)].assign(steps.size(), 0);
    begin.assign(steps.size() + 1, 0);
    total += steps.size();
    for (std::size_t i = 0; i < steps.size(); ++i) {
      remaining[static_cast<std::size_t>(r)][i] =
          static_cast<int>(steps[i].deps.size()) + match.fed_by[static_cast<std::size_t>(r)][i];
      for (int d : steps[i].deps) ++begin[static_cast<std::size_t>(d) + 1];
    }
    for (std::size_t i = 0; i < steps.size(); ++i) begin[i + 1] += begin[i];
    list.resize(begin.back());
    std::vector<std::uint32_t> filled(begin.begin(), begin.end() - 1);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      for (int d : steps[i].deps) list[filled[static_cast<std::size_t>(d)]++] = static_cast<int>(i);
    }
  }
  // The symbolic data costs ranks x slots x ranks bits: only when asked for.
  std::optional<DataState> data;
  if (check_data) data.emplace(p);
  std::map<StepRef, std::vector<ContributionSet>> in_flight;  // receive -> its data (a sum: so far)
  std::deque<std::pair<int, int>> ready;
  for (int r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < remaining[static_cast<std::size_t>(r)].size(); ++i) {
      if (remaining[static_cast<std::size_t>(r)][i] == 0) ready.push_back({r, static_cast<int>(i)});
    }
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    const auto [r, i] = ready.front();
    ready.pop_front();
    ++done;
    const Step& s = p.programs[static_cast<std::size_t>(r)].steps[static_cast<std::size_t>(i)];
    const auto where = [&, r = r, i = i] { return "rank " + std::to_string(r) + " step " + std::to_string(i) + ": "; };
    if (sends_data(s.kind)) {
      for (const StepRef& to : match.feeds[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)]) {
        if (check_data) {
          if (auto e = deliver(in_flight, to, data->read(r, s.src, s.count), s.kind == StepKind::kSwitchReduce)) {
            return where() + *e;
          }
        }
        if (--remaining[static_cast<std::size_t>(to.rank)][static_cast<std::size_t>(to.step)] == 0) ready.push_back({to.rank, to.step});
      }
    } else if (check_data && receives_data(s.kind)) {
      auto it = in_flight.find({r, i});
      if (auto e = data->write(r, s.dst, it->second, s.kind == StepKind::kRecvReduce)) return where() + *e;
      in_flight.erase(it);
    } else if (check_data) {
      if (auto e = data->local(r, s)) return where() + *e;
    }
    const auto& begin = child_begin[static_cast<std::size_t>(r)];
    const auto& list = child_list[static_cast<std::size_t>(r)];
    for (std::uint32_t k = begin[static_cast<std::size_t>(i)]; k < begin[static_cast<std::size_t>(i) + 1]; ++k) {
      const int c = list[k];
      if (--remaining[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] == 0) ready.push_back({r, c});
    }
  }
  if (done != total) return "the dependency graph has a cycle (or a receive whose send never runs)";
  if (check_data) {
    if (auto e = data->verify()) return "wrong result: " + *e;
  }
  if (matching != nullptr) *matching = std::move(std::get<ProgramMatching>(matched));
  return std::nullopt;
}

}  // namespace fabricsim
