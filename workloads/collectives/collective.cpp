#include "workloads/collectives/collective.h"

namespace fabricsim {

const char* op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "all_reduce";
    case CollectiveOp::kReduceScatter: return "reduce_scatter";
    case CollectiveOp::kAllGather: return "all_gather";
    case CollectiveOp::kBroadcast: return "broadcast";
    case CollectiveOp::kReduce: return "reduce";
    case CollectiveOp::kAllToAll: return "all_to_all";
    case CollectiveOp::kSendRecv: return "send_recv";
  }
  return "?";
}

std::optional<CollectiveOp> op_from_name(std::string_view name) {
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather, CollectiveOp::kBroadcast,
                          CollectiveOp::kReduce, CollectiveOp::kAllToAll, CollectiveOp::kSendRecv}) {
    if (name == op_name(op)) return op;
  }
  return std::nullopt;
}

double busbw_factor(CollectiveOp op, int n) {
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll: return static_cast<double>(n - 1) / n;
    default: return 1.0;
  }
}

std::int64_t CollectiveProgram::steps() const {
  std::int64_t n = 0;
  for (const RankProgram& p : programs) n += static_cast<std::int64_t>(p.steps.size());
  return n;
}

std::vector<int> CollectiveProgram::group_members(int g) const {
  if (g >= 0) return groups.at(static_cast<std::size_t>(g));
  std::vector<int> all(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) all[static_cast<std::size_t>(r)] = r;
  return all;
}

std::vector<bool> in_network_groups_named(const CollectiveProgram& program) {
  std::vector<bool> named(program.groups.size() + 1, false);
  for (const RankProgram& rp : program.programs) {
    for (const Step& s : rp.steps) {
      if (s.kind == StepKind::kSwitchReduce || s.kind == StepKind::kRecvSum || s.kind == StepKind::kMulticast) {
        named[static_cast<std::size_t>(s.group + 1)] = true;
      }
    }
  }
  return named;
}

bool uses_in_network(const CollectiveProgram& program) {
  for (const RankProgram& rp : program.programs) {
    for (const Step& s : rp.steps) {
      if (s.kind == StepKind::kSwitchReduce || s.kind == StepKind::kMulticast || s.kind == StepKind::kRecvSum) return true;
    }
  }
  return false;
}

}  // namespace fabricsim
