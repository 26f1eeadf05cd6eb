#pragma once
// How the steps of a collective program meet, worked out before the run (the
// connections NCCL sets up at communicator creation): which receive each send feeds.
// Sends and receives match in order per (sender, receiver, channel); a multicast feeds
// one receive on every rank; in-switch contributions match the owner's sums in order per
// (owner, channel), one contribution from every rank per sum.
#include <string>
#include <variant>
#include <vector>

#include "workloads/collectives/collective.h"

namespace fabricsim {

struct StepRef {
  int rank = -1;
  int step = -1;
  bool operator<(const StepRef& o) const { return rank != o.rank ? rank < o.rank : step < o.step; }
};

struct ProgramMatching {
  // Per rank and step: for a send, the receive it feeds; for a multicast, one receive
  // per rank (in rank order); for a contribution, the sum it goes into. Empty otherwise.
  std::vector<std::vector<std::vector<StepRef>>> feeds;
  // Per rank and step: how many transfers a receive's data comes from (a sum: ranks).
  std::vector<std::vector<int>> fed_by;
};

// The matching, or the first problem (counts or sizes that do not pair up).
std::variant<ProgramMatching, std::string> match_program(const CollectiveProgram& program);

}  // namespace fabricsim
