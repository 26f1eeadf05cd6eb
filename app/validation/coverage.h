#pragma once
// What the accuracy corpus covers (configs/validation/corpus.tsv: the published tables
// scripts/accuracy checks fabricsim against), and where a scenario's collective lies
// outside it: a GPU generation, a NIC between nodes, a node count or a scale-out fabric
// that no predicted table measured. Its numbers there are unvalidated predictions.
#include <string>
#include <vector>

#include "app/config/config.h"

namespace fabricsim {

struct CorpusTable {
  std::string name;
  std::string use;  // "calibration" or "prediction"
  int compute_capability = 0;
  std::string nic;  // "infiniband", "ethernet", or "none" (one node)
  int nodes = 1;
  std::string fabric;  // "nvswitch" (one node), "rail_optimized", "leaf_spine", "fat_tree", "torus3d"
  std::string op = "all_reduce";  // the collective the table measured (op_name)
};

// The corpus as built into this binary.
const char* validation_corpus_text();
std::vector<CorpusTable> validation_corpus();

// One line per way a collective of `ranks` on `topology` lies outside the corpus's
// tables; empty where a table of the same kind of system exists. With `op` (op_name),
// also where no such table measured that collective.
std::vector<std::string> coverage_gaps(const TopologyConfig& topology, int ranks, const std::vector<CorpusTable>& corpus,
                                       const std::string& op = "");

}  // namespace fabricsim
