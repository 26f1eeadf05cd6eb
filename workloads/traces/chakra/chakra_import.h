#pragma once
// MLCommons Chakra execution traces -> fabricsim traces. One file per rank
// (PREFIX.RANK.et): a length-delimited GlobalMetadata, then length-delimited Nodes.
// COMP_NODE becomes compute (duration_micros, or the `num_ops` attribute in FLOPs),
// COMM_COLL_NODE a collective (`comm_type`, `comm_size`), COMM_SEND_NODE and
// COMM_RECV_NODE a send or receive (`comm_dst` / `comm_src`, `comm_tag`, `comm_size`);
// control and data dependencies both become dependencies. A collective with a `pg_name`
// attribute (PyTorch's process group, as Chakra's converter records it) spans that
// group's ranks, given in `process_groups` (Chakra files do not list them: PyTorch keeps
// them apart); others span every rank. Collectives match across their members in the
// order each member issues them within the group, as ASTRA-sim replays them.
#include <map>
#include <string>
#include <vector>

#include "workloads/traces/trace.h"

namespace fabricsim {

// Throws std::runtime_error naming the file on a problem.
Trace import_chakra(const std::string& prefix, int ranks, const std::map<std::string, std::vector<int>>& process_groups = {});

// Writes `trace` as Chakra files PREFIX.RANK.et (compute as duration_micros, whole
// microseconds; a collective's process_group as pg_name): for tests and for handing
// traces to other Chakra tools.
void export_chakra(const Trace& trace, const std::string& prefix);

}  // namespace fabricsim
