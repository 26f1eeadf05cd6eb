#include "workloads/collectives/collnet.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

namespace fabricsim {

CollectiveProgram collnet(CollectiveOp op, int n, std::int64_t bytes, const AlgorithmParams& a) {
  if (op != CollectiveOp::kAllReduce) throw std::invalid_argument(std::string("collnet does not do ") + op_name(op));
  const int g = a.local_size;
  if (g < 1 || n % g != 0 || n / g < 2) {
    throw std::invalid_argument("collnet needs whole nodes, at least two nodes: " + std::to_string(n) + " ranks, " +
                                std::to_string(g) + " per node");
  }
  const int nodes = n / g;
  const int channels = std::max(1, a.channels);
  // Pieces of NCCL's Simple step (512 KiB) unless told otherwise.
  const std::int64_t chunk = a.chunk_bytes > 0 ? a.chunk_bytes : 512 * 1024;
  const std::int64_t share = std::max<std::int64_t>(1, bytes / g / channels);
  const int k = static_cast<int>(std::min<std::int64_t>(4096, (share + chunk - 1) / chunk));
  CollectiveProgram p;
  p.name = "collnet";
  p.op = op;
  p.ranks = n;
  p.chunks = g * channels * k;
  p.slots = p.chunks;
  p.slot_bytes = std::max<std::int64_t>(1, (bytes + p.chunks - 1) / p.chunks);
  p.programs.resize(static_cast<std::size_t>(n));
  for (int l = 0; l < g; ++l) {  // group l: local GPU l of every node (one rail)
    std::vector<int> rail;
    for (int node = 0; node < nodes; ++node) rail.push_back(node * g + l);
    p.groups.push_back(std::move(rail));
  }
  const auto slot = [&](int owner, int channel, int piece) { return (owner * channels + channel) * k + piece; };
  const auto add = [&](int rank, Step s) {
    auto& steps = p.programs[static_cast<std::size_t>(rank)].steps;
    steps.push_back(std::move(s));
    return static_cast<int>(steps.size()) - 1;
  };
  // A rank's sends to one peer on one channel go piece after piece.
  std::map<std::tuple<int, int, int>, int> last_send;
  const auto send = [&](int r, int peer, int channel, int at, std::vector<int> deps) {
    auto [it, fresh] = last_send.try_emplace({r, peer, channel}, -1);
    if (it->second >= 0) deps.push_back(it->second);
    Step s;
    s.kind = StepKind::kSend;
    s.peer = peer;
    s.channel = channel;
    s.src = at;
    s.deps = std::move(deps);
    it->second = add(r, std::move(s));
    return it->second;
  };
  const auto recv = [&](int r, int peer, int channel, int at, bool reduce, std::vector<int> deps) {
    Step s;
    s.kind = reduce ? StepKind::kRecvReduce : StepKind::kRecv;
    s.peer = peer;
    s.channel = channel;
    s.dst = at;
    s.deps = std::move(deps);
    return add(r, std::move(s));
  };
  for (int r = 0; r < n; ++r) {
    const int node = r / g, local = r % g;
    for (int c = 0; c < channels; ++c) {
      const int rs = 2 * c, ag = 2 * c + 1;  // reduce-scatter and all-gather channels
      int previous_contribution = -1;
      for (int j = 0; j < k; ++j) {
        // 1. Reduce-scatter: this piece of every other GPU's share goes to its owner.
        for (int q = 0; q < g; ++q) {
          if (q != local) send(r, node * g + q, rs, slot(q, c, j), {});
        }
        std::vector<int> gathered;
        for (int q = 0; q < g; ++q) {
          if (q != local) gathered.push_back(recv(r, node * g + q, rs, slot(local, c, j), true, {}));
        }
        // 2. The node's partial sum to the rail's SHARP switch; the total comes back.
        Step contribute;
        contribute.kind = StepKind::kSwitchReduce;
        contribute.peer = kAllMembers;
        contribute.group = local;
        contribute.channel = c;
        contribute.src = slot(local, c, j);
        contribute.deps = gathered;
        if (previous_contribution >= 0) contribute.deps.push_back(previous_contribution);
        previous_contribution = add(r, std::move(contribute));
        Step total;
        total.kind = StepKind::kRecvSum;
        total.peer = kAllMembers;
        total.group = local;
        total.channel = c;
        total.dst = slot(local, c, j);
        total.deps = {previous_contribution};
        const int have = add(r, std::move(total));
        // 3. All-gather: the total to the node's other GPUs, which take every owner's.
        for (int q = 0; q < g; ++q) {
          if (q != local) send(r, node * g + q, ag, slot(local, c, j), {have});
        }
        for (int q = 0; q < g; ++q) {
          if (q != local) recv(r, node * g + q, ag, slot(q, c, j), false, {});
        }
      }
    }
  }
  return p;
}

namespace {

bool collnet_does(CollectiveOp op) { return op == CollectiveOp::kAllReduce; }
// Into the node's switches and out through the NICs and the reducing switch.
double collnet_wire_latency_us(const WireFacts& f) { return 2 * f.intra_step_us + 2 * f.inter_step_us; }

}  // namespace

extern const CollectiveAlgorithm kCollNetAlgorithm{
    .name = "collnet",
    .nccl_name = "CollNetDirect",
    .nccl = NcclAlgo::kCollNetDirect,
    .protocols = ProtocolSupport::kSimpleOnly,
    .packet_only = true,
    .does = collnet_does,
    .build = collnet,
    .wire_latency_us = collnet_wire_latency_us,
};

}  // namespace fabricsim
