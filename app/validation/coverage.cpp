#include "app/validation/coverage.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <variant>

namespace fabricsim {

std::vector<CorpusTable> validation_corpus() {
  std::vector<CorpusTable> out;
  std::istringstream in(validation_corpus_text());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("name\t", 0) == 0) continue;
    std::vector<std::string> f;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) f.push_back(cell);
    // name, table, config, ranks, use, algorithm, op, compute capability, nic, nodes, fabric, nccl, source
    if (f.size() < 11) continue;
    CorpusTable t;
    t.name = f[0];
    t.use = f[4];
    t.op = f[6];
    t.compute_capability = std::stoi(f[7]);
    t.nic = f[8];
    t.nodes = std::stoi(f[9]);
    t.fabric = f[10];
    out.push_back(t);
  }
  return out;
}

namespace {

struct SystemFacts {
  int compute_capability = 0;  // 0: no GPUs (a host fabric)
  std::string nic = "none";
  int nodes = 1;
  std::string fabric = "nvswitch";
};

std::string fabric_name(const ScaleOutSpec& f) {
  if (std::holds_alternative<RailOptimizedSpec>(f)) return "rail_optimized";
  if (std::holds_alternative<LeafSpineSpec>(f)) return "leaf_spine";
  if (std::holds_alternative<FatTreeSpec>(f)) return "fat_tree";
  return "torus3d";
}

SystemFacts facts_of(const TopologyConfig& t, int ranks) {
  SystemFacts s;
  if (t.kind == TopologyConfig::Kind::kNvSwitch) {
    s.compute_capability = t.nvswitch.compute_capability;
  } else if (t.kind == TopologyConfig::Kind::kCluster) {
    const ClusterSpec& c = t.cluster;
    s.compute_capability = c.node.compute_capability;
    const int per_node = std::max(1, c.node.gpus);
    s.nodes = std::max(1, (std::max(1, ranks) + per_node - 1) / per_node);
    if (s.nodes > 1) {
      s.nic = c.nic_link.flow_control == FlowControl::kCredit ? "infiniband" : "ethernet";
      s.fabric = fabric_name(c.fabric);
    }
  }
  return s;
}

std::string list(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

}  // namespace

std::vector<std::string> coverage_gaps(const TopologyConfig& topology, int ranks, const std::vector<CorpusTable>& corpus,
                                       const std::string& op) {
  std::vector<std::string> gaps;
  const SystemFacts s = facts_of(topology, ranks);
  if (s.compute_capability == 0) {
    gaps.push_back("a host fabric without GPUs: no published NCCL table measures one");
    return gaps;
  }
  // Across nodes only predictions count: a calibrated table was fitted, not predicted.
  std::vector<CorpusTable> tables;
  for (const CorpusTable& t : corpus) {
    if (s.nodes > 1 ? t.use == "prediction" && t.nodes > 1 : t.nodes == 1) tables.push_back(t);
  }
  const std::string where = s.nodes > 1 ? "across nodes" : "on one node";
  std::set<std::string> ccs, nics, fabrics, ops;
  int most_nodes = 0;
  for (const CorpusTable& t : tables) {
    ops.insert(t.op);
    ccs.insert(std::to_string(t.compute_capability));
    nics.insert(t.nic);
    fabrics.insert(t.fabric);
    most_nodes = std::max(most_nodes, t.nodes);
  }
  if (tables.empty()) {
    gaps.push_back("no published table " + where + " in the corpus");
    return gaps;
  }
  if (!op.empty() && !ops.count(op)) gaps.push_back(op + ": no table " + where + " (the corpus has " + list(ops) + ")");
  if (!ccs.count(std::to_string(s.compute_capability))) {
    gaps.push_back("GPUs of compute capability " + std::to_string(s.compute_capability) + ": no table " + where +
                   " (the corpus has " + list(ccs) + ")");
  }
  if (s.nodes > 1) {
    if (!nics.count(s.nic)) gaps.push_back(s.nic + " between nodes: no table (the corpus has " + list(nics) + ")");
    if (!fabrics.count(s.fabric)) gaps.push_back("a " + s.fabric + " fabric: no table (the corpus has " + list(fabrics) + ")");
    if (s.nodes > most_nodes) {
      gaps.push_back(std::to_string(s.nodes) + " nodes: no table beyond " + std::to_string(most_nodes));
    }
  }
  return gaps;
}

}  // namespace fabricsim
