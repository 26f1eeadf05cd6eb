#include "workloads/collectives/collective_algorithms.h"

#include <stdexcept>

namespace fabricsim {

// Each defined in its own file.
extern const CollectiveAlgorithm kRingAlgorithm;
extern const CollectiveAlgorithm kTreeAlgorithm;
extern const CollectiveAlgorithm kHalvingDoublingAlgorithm;
extern const CollectiveAlgorithm kRecursiveDoublingAlgorithm;
extern const CollectiveAlgorithm kHierarchicalAlgorithm;
extern const CollectiveAlgorithm kDirectAlgorithm;
extern const CollectiveAlgorithm kNvlsAlgorithm;
extern const CollectiveAlgorithm kNvlsTreeAlgorithm;
extern const CollectiveAlgorithm kCollNetAlgorithm;

// The registry: one line per algorithm.
const std::vector<const CollectiveAlgorithm*>& collective_algorithms() {
  static const std::vector<const CollectiveAlgorithm*> all{
      &kRingAlgorithm,
      &kTreeAlgorithm,
      &kHalvingDoublingAlgorithm,
      &kRecursiveDoublingAlgorithm,
      &kHierarchicalAlgorithm,
      &kDirectAlgorithm,
      &kNvlsAlgorithm,
      &kNvlsTreeAlgorithm,
      &kCollNetAlgorithm,
  };
  return all;
}

const CollectiveAlgorithm* find_collective_algorithm(std::string_view name) {
  for (const CollectiveAlgorithm* a : collective_algorithms()) {
    if (name == a->name) return a;
  }
  return nullptr;
}

const CollectiveAlgorithm* find_collective_algorithm(NcclAlgo nccl) {
  for (const CollectiveAlgorithm* a : collective_algorithms()) {
    if (a->nccl == nccl) return a;
  }
  return nullptr;
}

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const CollectiveAlgorithm* a : collective_algorithms()) out.emplace_back(a->name);
    return out;
  }();
  return names;
}

const char* nccl_algo_name(std::string_view algorithm) {
  if (const CollectiveAlgorithm* a = find_collective_algorithm(algorithm)) return a->nccl_name;
  if (algorithm == "msccl" || algorithm == "steps") return "MSCCL";
  return "-";
}

CollectiveProgram build_collective(const std::string& algorithm, CollectiveOp op, int ranks, std::int64_t bytes,
                                   const AlgorithmParams& params) {
  if (ranks < 2) throw std::invalid_argument("a collective needs at least two ranks");
  if (bytes < 1) throw std::invalid_argument("a collective needs at least one byte");
  if (op == CollectiveOp::kSendRecv && algorithm != "direct") throw std::invalid_argument("send_recv uses the direct algorithm");
  if (const CollectiveAlgorithm* a = find_collective_algorithm(algorithm)) return a->build(op, ranks, bytes, params);
  std::string known;
  for (const auto& n : algorithm_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown algorithm '" + algorithm + "'; expected one of " + known);
}

}  // namespace fabricsim
