#include <optional>
#include "workloads/collective_data.h"

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

std::optional<std::string> check_program(const CollectiveProgram& p, bool check_data) {
  const int n = p.ranks;
  if (static_cast<int>(p.programs.size()) != n) return "expected one program per rank";
  // Slots, peers and dependencies in range.
  for (int r = 0; r < n; ++r) {
    const auto& steps = p.programs[static_cast<std::size_t>(r)].steps;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Step& s = steps[i];
      const std::string where = "rank " + std::to_string(r) + " step " + std::to_string(i);
      const bool reads = s.kind == StepKind::kSend || s.kind == StepKind::kCopy || s.kind == StepKind::kReduce;
      const bool writes = s.kind != StepKind::kSend && s.kind != StepKind::kNop;
      if (s.count < 1) return where + ": count must be at least 1";
      if (reads && (s.src < 0 || s.src + s.count > p.slots)) return where + ": source slots out of range";
      if (writes && (s.dst < 0 || s.dst + s.count > p.slots)) return where + ": destination slots out of range";
      const bool talks = s.kind == StepKind::kSend || s.kind == StepKind::kRecv || s.kind == StepKind::kRecvReduce;
      if (talks && (s.peer < 0 || s.peer >= n || s.peer == r)) return where + ": peer out of range";
      for (int d : s.deps) {
        if (d < 0 || d >= static_cast<int>(steps.size()) || d == static_cast<int>(i)) return where + ": dependency out of range";
      }
    }
  }
  // Match sends and receives in order per (sender, receiver, channel).
  using Key = std::tuple<int, int, int>;
  std::map<Key, std::deque<std::pair<int, int>>> sends, recvs;  // -> (rank, step)
  for (int r = 0; r < n; ++r) {
    const auto& steps = p.programs[static_cast<std::size_t>(r)].steps;
    for (int i = 0; i < static_cast<int>(steps.size()); ++i) {
      const Step& s = steps[static_cast<std::size_t>(i)];
      if (s.kind == StepKind::kSend) sends[{r, s.peer, s.channel}].push_back({r, i});
      if (s.kind == StepKind::kRecv || s.kind == StepKind::kRecvReduce) recvs[{s.peer, r, s.channel}].push_back({r, i});
    }
  }
  std::map<std::pair<int, int>, std::pair<int, int>> match;  // send -> recv and recv -> send
  for (auto& [key, list] : sends) {
    auto& other = recvs[key];
    const auto [from, to, channel] = key;
    const std::string pair = "from rank " + std::to_string(from) + " to rank " + std::to_string(to) + " on channel " +
                             std::to_string(channel);
    if (list.size() != other.size()) {
      return std::to_string(list.size()) + " sends but " + std::to_string(other.size()) + " receives " + pair;
    }
    for (std::size_t k = 0; k < list.size(); ++k) {
      const Step& s = p.programs[static_cast<std::size_t>(list[k].first)].steps[static_cast<std::size_t>(list[k].second)];
      const Step& rv = p.programs[static_cast<std::size_t>(other[k].first)].steps[static_cast<std::size_t>(other[k].second)];
      if (s.count != rv.count) return "send " + std::to_string(k) + " " + pair + " carries " + std::to_string(s.count) + " chunks, its receive expects " + std::to_string(rv.count);
      match[list[k]] = other[k];
      match[other[k]] = list[k];
    }
  }
  for (auto& [key, list] : recvs) {
    if (!list.empty() && !sends.count(key)) {
      return std::to_string(list.size()) + " receives from rank " + std::to_string(std::get<0>(key)) + " at rank " +
             std::to_string(std::get<1>(key)) + " on channel " + std::to_string(std::get<2>(key)) + " with no send";
    }
  }
  // Kahn's algorithm over dependencies plus send -> receive edges; runs the data
  // symbolically in the same order.
  std::vector<std::vector<int>> remaining(static_cast<std::size_t>(n));
  std::vector<std::vector<std::vector<int>>> children(static_cast<std::size_t>(n));
  std::size_t total = 0;
  for (int r = 0; r < n; ++r) {
    const auto& steps = p.programs[static_cast<std::size_t>(r)].steps;
    remaining[static_cast<std::size_t>(r)].assign(steps.size(), 0);
    children[static_cast<std::size_t>(r)].assign(steps.size(), {});
    total += steps.size();
    for (std::size_t i = 0; i < steps.size(); ++i) {
      remaining[static_cast<std::size_t>(r)][i] = static_cast<int>(steps[i].deps.size());
      for (int d : steps[i].deps) children[static_cast<std::size_t>(r)][static_cast<std::size_t>(d)].push_back(static_cast<int>(i));
      if (steps[i].kind == StepKind::kRecv || steps[i].kind == StepKind::kRecvReduce) ++remaining[static_cast<std::size_t>(r)][i];
    }
  }
  // The symbolic data costs ranks x slots x ranks bits: only when asked for.
  std::optional<DataState> data;
  if (check_data) data.emplace(p);
  std::map<std::pair<int, int>, std::vector<ContributionSet>> in_flight;
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
    if (s.kind == StepKind::kSend) {
      const auto peer = match.at({r, i});
      if (check_data) in_flight[peer] = data->read(r, s.src, s.count);
      if (--remaining[static_cast<std::size_t>(peer.first)][static_cast<std::size_t>(peer.second)] == 0) ready.push_back(peer);
    } else if (check_data && (s.kind == StepKind::kRecv || s.kind == StepKind::kRecvReduce)) {
      if (auto e = data->write(r, s.dst, in_flight.at({r, i}), s.kind == StepKind::kRecvReduce)) return where() + *e;
    } else if (check_data) {
      if (auto e = data->local(r, s)) return where() + *e;
    }
    for (int c : children[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)]) {
      if (--remaining[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] == 0) ready.push_back({r, c});
    }
  }
  if (done != total) return "the dependency graph has a cycle (or a receive whose send never runs)";
  if (check_data) {
    if (auto e = data->verify()) return "wrong result: " + *e;
  }
  return std::nullopt;
}

}  // namespace fabricsim
