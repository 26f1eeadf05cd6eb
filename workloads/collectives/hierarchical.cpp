// Hierarchical AllReduce: rings inside each node and along each rail.
#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/program_builder.h"

namespace fabricsim {
namespace {

using namespace collective_building;

// Hierarchical all-reduce: reduce-scatter among each node's GPUs, all-reduce of each
// part among the GPUs with the same local index (one per node: a rail), all-gather
// inside the node. Ranks are node-major.
CollectiveProgram hierarchical(CollectiveOp op, int n, std::int64_t bytes, const AlgorithmParams& a) {
  if (op != CollectiveOp::kAllReduce) throw std::invalid_argument(std::string("hierarchical does not do ") + op_name(op));
  const int g = std::min(a.local_size, n);
  if (g < 1 || n % g != 0) {
    throw std::invalid_argument("hierarchical needs the group to be whole nodes: " + std::to_string(n) + " ranks, " +
                                std::to_string(g) + " per node");
  }
  const int nodes = n / g;
  CollectiveProgram p = empty_program("hierarchical", op, n, g * nodes, bytes);
  Builder b{p};
  std::vector<int> after(static_cast<std::size_t>(n), -1);
  // Part j (a local index) spans slots [j * nodes, (j + 1) * nodes).
  for (int node = 0; node < nodes && g > 1; ++node) {
    RingPlan plan;
    for (int l = 0; l < g; ++l) plan.members.push_back(node * g + l);
    plan.width = nodes;
    plan.slot = [nodes](int seg, int) { return seg * nodes; };
    plan.channel_base = 0;
    const auto last = ring_phase(b, plan, true, {});
    for (int l = 0; l < g; ++l) after[static_cast<std::size_t>(node * g + l)] = last[static_cast<std::size_t>(l)];
  }
  for (int l = 0; l < g && nodes > 1; ++l) {
    RingPlan plan;
    std::vector<int> rail_after;
    for (int node = 0; node < nodes; ++node) {
      plan.members.push_back(node * g + l);
      rail_after.push_back(after[static_cast<std::size_t>(node * g + l)]);
    }
    plan.slot = [l, nodes](int seg, int) { return l * nodes + seg; };
    plan.channel_base = 1;
    const auto mid = ring_phase(b, plan, true, rail_after);
    plan.channel_base = 2;
    const auto last = ring_phase(b, plan, false, mid);
    for (int node = 0; node < nodes; ++node) after[static_cast<std::size_t>(node * g + l)] = last[static_cast<std::size_t>(node)];
  }
  for (int node = 0; node < nodes && g > 1; ++node) {
    RingPlan plan;
    std::vector<int> node_after;
    for (int l = 0; l < g; ++l) {
      plan.members.push_back(node * g + l);
      node_after.push_back(after[static_cast<std::size_t>(node * g + l)]);
    }
    plan.width = nodes;
    plan.slot = [nodes](int seg, int) { return seg * nodes; };
    plan.channel_base = 3;
    ring_phase(b, plan, false, node_after);
  }
  return p;
}

bool does(CollectiveOp op) { return op == CollectiveOp::kAllReduce; }

}  // namespace

extern const CollectiveAlgorithm kHierarchicalAlgorithm{
    .name = "hierarchical",
    .nccl_name = "-",
    .does = does,
    .build = hierarchical,
};

}  // namespace fabricsim
