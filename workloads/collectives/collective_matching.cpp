#include "workloads/collectives/collective_matching.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

namespace fabricsim {

std::variant<ProgramMatching, std::string> match_program(const CollectiveProgram& p) {
  const int n = p.ranks;
  const auto step_of = [&](StepRef s) -> const Step& {
    return p.programs[static_cast<std::size_t>(s.rank)].steps[static_cast<std::size_t>(s.step)];
  };
  ProgramMatching m;
  m.feeds.resize(static_cast<std::size_t>(n));
  m.fed_by.resize(static_cast<std::size_t>(n));
  // (from, to, channel) -> receives in order: one sorted array, a cursor per key (a
  // collective has a key per pair and channel, often with one receive each, so no
  // container per key).
  using Key = std::tuple<int, int, int>;
  std::vector<std::pair<Key, StepRef>> recv_list;
  std::map<std::pair<int, int>, std::vector<StepRef>> sums;       // (owner, channel) -> sums in order
  // SHARP: (group, channel) -> per member rank, its sums in order.
  std::map<std::pair<int, int>, std::map<int, std::vector<StepRef>>> all_sums;
  for (int r = 0; r < n; ++r) {
    const auto& steps = p.programs[static_cast<std::size_t>(r)].steps;
    m.feeds[static_cast<std::size_t>(r)].resize(steps.size());
    m.fed_by[static_cast<std::size_t>(r)].assign(steps.size(), 0);
    for (int i = 0; i < static_cast<int>(steps.size()); ++i) {
      const Step& s = steps[static_cast<std::size_t>(i)];
      if (s.kind == StepKind::kRecv || s.kind == StepKind::kRecvReduce) recv_list.push_back({{s.peer, r, s.channel}, {r, i}});
      if (s.kind == StepKind::kRecvSum && s.peer == kAllMembers) {
        all_sums[{s.group, s.channel}][r].push_back({r, i});
      } else if (s.kind == StepKind::kRecvSum) {
        sums[{r, s.channel}].push_back({r, i});
      }
    }
  }
  // Program order within a key: receives were listed rank by rank, step by step.
  std::stable_sort(recv_list.begin(), recv_list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  struct RecvQueue {
    Key key;
    std::size_t begin;  // its receives in recv_list: [begin, end)
    std::size_t next;   // the first not yet fed
    std::size_t end;
  };
  std::vector<RecvQueue> recvs;
  for (std::size_t i = 0; i < recv_list.size(); ++i) {
    if (recvs.empty() || recvs.back().key != recv_list[i].first) recvs.push_back({recv_list[i].first, i, i, i + 1});
    recvs.back().end = i + 1;
  }
  const auto queue_of = [&](const Key& key) -> RecvQueue* {
    const auto it = std::lower_bound(recvs.begin(), recvs.end(), key, [](const RecvQueue& q, const Key& k) { return q.key < k; });
    return it != recvs.end() && it->key == key ? &*it : nullptr;
  };
  const auto pair_name = [](int from, int to, int channel) {
    return "from rank " + std::to_string(from) + " to rank " + std::to_string(to) + " on channel " + std::to_string(channel);
  };
  std::map<std::tuple<int, int, int>, std::size_t> contributed;  // (rank, owner, channel) -> made so far
  for (int r = 0; r < n; ++r) {
    const auto& steps = p.programs[static_cast<std::size_t>(r)].steps;
    for (int i = 0; i < static_cast<int>(steps.size()); ++i) {
      const Step& s = steps[static_cast<std::size_t>(i)];
      auto& feeds = m.feeds[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)];
      const auto feed = [&](int to) -> std::optional<std::string> {
        RecvQueue* queue = queue_of({r, to, s.channel});
        // Sends so far on this key: as many as receives fed, since the first unfed one stops here.
        const std::size_t k = queue == nullptr ? 0 : queue->next - queue->begin;
        if (queue == nullptr || queue->next == queue->end) {
          return std::to_string(k + 1) + " sends but " + std::to_string(k) + " receives " + pair_name(r, to, s.channel);
        }
        const StepRef target = recv_list[queue->next++].second;
        if (step_of(target).count != s.count) {
          return "send " + std::to_string(k) + " " + pair_name(r, to, s.channel) + " carries " + std::to_string(s.count) +
                 " chunks, its receive expects " + std::to_string(step_of(target).count);
        }
        feeds.push_back(target);
        ++m.fed_by[static_cast<std::size_t>(target.rank)][static_cast<std::size_t>(target.step)];
        return std::nullopt;
      };
      if (s.kind == StepKind::kSend) {
        if (auto e = feed(s.peer)) return *e;
      } else if (s.kind == StepKind::kMulticast) {
        for (int q : p.group_members(s.group)) {
          if (auto e = feed(q)) return "multicast: " + *e;
        }
      } else if (s.kind == StepKind::kSwitchReduce && s.peer == kAllMembers) {
        // SHARP: the k-th contribution feeds every member's k-th sum.
        const std::size_t k = contributed[{r, kAllMembers - s.group, s.channel}]++;
        auto& per_member = all_sums[{s.group, s.channel}];
        for (int q : p.group_members(s.group)) {
          const auto& list = per_member[q];
          if (k >= list.size()) {
            return "rank " + std::to_string(r) + " makes " + std::to_string(k + 1) + " contributions to group " +
                   std::to_string(s.group) + "'s sums on channel " + std::to_string(s.channel) + ", rank " + std::to_string(q) +
                   " takes " + std::to_string(list.size());
          }
          if (step_of(list[k]).count != s.count) {
            return "rank " + std::to_string(r) + "'s contribution " + std::to_string(k) + " to group " + std::to_string(s.group) +
                   " carries " + std::to_string(s.count) + " chunks, rank " + std::to_string(q) + "'s sum expects " +
                   std::to_string(step_of(list[k]).count);
          }
          feeds.push_back(list[k]);
          ++m.fed_by[static_cast<std::size_t>(q)][static_cast<std::size_t>(list[k].step)];
        }
      } else if (s.kind == StepKind::kSwitchReduce) {
        const std::size_t k = contributed[{r, s.peer, s.channel}]++;
        const auto& list = sums[{s.peer, s.channel}];
        if (k >= list.size()) {
          return "rank " + std::to_string(r) + " makes " + std::to_string(k + 1) + " in-switch contributions to rank " +
                 std::to_string(s.peer) + " on channel " + std::to_string(s.channel) + ", which takes " +
                 std::to_string(list.size()) + " sums";
        }
        const StepRef target = list[k];
        if (step_of(target).group != s.group) {
          return "rank " + std::to_string(r) + "'s in-switch contribution " + std::to_string(k) + " to rank " +
                 std::to_string(s.peer) + " is for group " + std::to_string(s.group) + ", the sum's group is " +
                 std::to_string(step_of(target).group);
        }
        if (step_of(target).count != s.count) {
          return "rank " + std::to_string(r) + "'s in-switch contribution " + std::to_string(k) + " to rank " +
                 std::to_string(s.peer) + " carries " + std::to_string(s.count) + " chunks, the sum expects " +
                 std::to_string(step_of(target).count);
        }
        feeds.push_back(target);
        ++m.fed_by[static_cast<std::size_t>(target.rank)][static_cast<std::size_t>(target.step)];
      }
    }
  }
  for (const RecvQueue& queue : recvs) {
    if (queue.next != queue.end) {
      const auto [from, to, channel] = queue.key;
      return std::to_string(queue.next - queue.begin) + " sends but " + std::to_string(queue.end - queue.begin) + " receives " +
             pair_name(from, to, channel);
    }
  }
  for (const auto& [key, list] : sums) {
    for (const StepRef& s : list) {
      const int got = m.fed_by[static_cast<std::size_t>(s.rank)][static_cast<std::size_t>(s.step)];
      const int want = static_cast<int>(p.group_members(step_of(s).group).size());
      if (got != want) {
        return "rank " + std::to_string(key.first) + "'s sum on channel " + std::to_string(key.second) + " (step " +
               std::to_string(s.step) + ") gets " + std::to_string(got) + " contributions, expected one from each of " +
               std::to_string(want) + " ranks";
      }
    }
  }
  for (const auto& [key, per_member] : all_sums) {
    const int want = static_cast<int>(p.group_members(key.first).size());
    for (const auto& [rank, list] : per_member) {
      for (const StepRef& s : list) {
        const int got = m.fed_by[static_cast<std::size_t>(s.rank)][static_cast<std::size_t>(s.step)];
        if (got != want) {
          return "rank " + std::to_string(rank) + "'s group sum on channel " + std::to_string(key.second) + " (step " +
                 std::to_string(s.step) + ") gets " + std::to_string(got) + " contributions, expected one from each of " +
                 std::to_string(want) + " ranks";
        }
      }
    }
  }
  return m;
}

}  // namespace fabricsim
