#include "workloads/collectives/program_builder.h"

namespace fabricsim::collective_building {

std::vector<int> ring_phase(Builder& b, const RingPlan& plan, bool reduce_scatter, const std::vector<int>& after) {
  const int n = static_cast<int>(plan.members.size());
  std::vector<int> last(static_cast<std::size_t>(n), -1);
  if (n < 2) return after;
  std::vector<std::vector<int>> prev_send(static_cast<std::size_t>(n), std::vector<int>(static_cast<std::size_t>(n - 1), -1));
  for (int q = 0; q < plan.streams; ++q) {
    const int channel = plan.channel_base + q;
    for (int i = 0; i < n; ++i) {
      const int r = plan.members[static_cast<std::size_t>(i)];
      const int next = plan.members[static_cast<std::size_t>(mod(i + 1, n))];
      const int prev = plan.members[static_cast<std::size_t>(mod(i - 1, n))];
      int have = after.empty() ? -1 : after[static_cast<std::size_t>(i)];
      int last_recv = -1;
      for (int t = 0; t < n - 1; ++t) {
        const int send_seg = reduce_scatter ? mod(i - 1 - t, n) : mod(i - t, n);
        const int recv_seg = reduce_scatter ? mod(i - 2 - t, n) : mod(i - 1 - t, n);
        const int s = b.send(r, next, channel, plan.slot(send_seg, q), plan.width,
                             deps_of(t == 0 ? have : last_recv, prev_send[static_cast<std::size_t>(i)][static_cast<std::size_t>(t)]));
        prev_send[static_cast<std::size_t>(i)][static_cast<std::size_t>(t)] = s;
        // A reducing receive must not overwrite what this rank is sending at the same step.
        last_recv = b.recv(r, prev, channel, plan.slot(recv_seg, q), plan.width, reduce_scatter, deps_of(s));
      }
      last[static_cast<std::size_t>(i)] = std::max(last[static_cast<std::size_t>(i)], last_recv);
    }
  }
  return last;
}

}  // namespace fabricsim::collective_building
