// The accuracy corpus built into the binary, and where a config lies outside it.
#include <doctest/doctest.h>

#include <string>

#include "app/config/config_loader.h"
#include "app/validation/coverage.h"
#include "test_support.h"

using namespace fabricsim;

namespace {
bool has(const std::vector<std::string>& gaps, const std::string& part) {
  for (const auto& g : gaps) {
    if (g.find(part) != std::string::npos) return true;
  }
  return false;
}
}  // namespace

TEST_CASE("the built-in corpus is configs/validation/corpus.tsv's tables") {
  const std::vector<CorpusTable> corpus = validation_corpus();
  REQUIRE(corpus.size() >= 2);
  bool a100 = false, h100 = false;
  for (const CorpusTable& t : corpus) {
    if (t.name == "a100_2node_roce") {
      a100 = true;
      CHECK(t.use == "prediction");
      CHECK(t.compute_capability == 80);
      CHECK(t.nic == "ethernet");
      CHECK(t.nodes == 2);
      CHECK(t.fabric == "rail_optimized");
      CHECK(t.op == "all_reduce");
    }
    if (t.name == "h100_1node_nvls") {
      h100 = true;
      CHECK(t.use == "calibration");
      CHECK(t.nodes == 1);
    }
  }
  CHECK(a100);
  CHECK(h100);
}

TEST_CASE("coverage: what no table of the corpus measured is named, the rest passes") {
  // A hand-made corpus: one predicted 2-node A100 RoCE table, one calibrated 1-node H100.
  const std::vector<CorpusTable> corpus{{"a", "prediction", 80, "ethernet", 2, "rail_optimized"},
                                        {"b", "calibration", 90, "none", 1, "nvswitch"}};
  const auto cluster = [](const std::string& preset, const std::string& kind, int nodes) {
    return load_config_text("topology:\n  kind: cluster\n  nodes: " + std::to_string(nodes) + "\n  node: {preset: " + preset +
                                "}\n  nic: {bandwidth: 200Gbps, kind: " + kind +
                                "}\n  fabric: {kind: rail_optimized, spines: 2, fabric_link: {bandwidth: 200Gbps}}\n",
                            "<test>")
        .topology;
  };
  // The table's own kind of system: nothing to say.
  CHECK(coverage_gaps(cluster("dgx_a100", "ethernet", 2), 16, corpus).empty());
  // H100 over InfiniBand across nodes: the GPU and the NIC were never predicted there.
  const auto h100 = coverage_gaps(cluster("dgx_h100", "infiniband", 2), 16, corpus);
  CHECK(h100.size() == 2);
  CHECK(has(h100, "compute capability 90"));
  CHECK(has(h100, "infiniband between nodes"));
  // Four A100 nodes: beyond the corpus's 2; on one node of them, only the calibrated H100.
  CHECK(has(coverage_gaps(cluster("dgx_a100", "ethernet", 4), 32, corpus), "4 nodes: no table beyond 2"));
  CHECK(has(coverage_gaps(cluster("dgx_a100", "ethernet", 4), 8, corpus), "compute capability 80: no table on one node"));
  // One H100 node: the calibrated table covers it.
  CHECK(coverage_gaps(cluster("dgx_h100", "infiniband", 1), 8, corpus).empty());
  // A collective no table of that kind of system measured is named.
  const auto gather = coverage_gaps(cluster("dgx_a100", "ethernet", 2), 16, corpus, "all_gather");
  REQUIRE(gather.size() == 1);
  CHECK(gather[0] == "all_gather: no table across nodes (the corpus has all_reduce)");
  CHECK(coverage_gaps(cluster("dgx_a100", "ethernet", 2), 16, corpus, "all_reduce").empty());
  // A host fabric has no GPUs.
  const auto hosts = load_config_text("topology: {kind: fat_tree, k: 4, host_link: {bandwidth: 100Gbps}, fabric_link: {bandwidth: 100Gbps}}\n", "<test>").topology;
  CHECK(has(coverage_gaps(hosts, 16, corpus), "without GPUs"));
}
