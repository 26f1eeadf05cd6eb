// The collective registry: every algorithm's entry agrees with its builder and with
// NCCL's names.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "workloads/collectives/collective_algorithms.h"

using namespace fabricsim;

TEST_CASE("the registry lists the built-in algorithms once each, by name and by NCCL's algorithm") {
  const auto& names = algorithm_names();
  REQUIRE(names.size() == 9);
  CHECK(names.front() == "ring");
  for (const std::string& n : names) {
    const CollectiveAlgorithm* a = find_collective_algorithm(n);
    REQUIRE(a != nullptr);
    CHECK(n == a->name);
    if (a->nccl) CHECK(find_collective_algorithm(*a->nccl) == a);
  }
  CHECK(find_collective_algorithm("no_such") == nullptr);
  // NCCL_ALGO's words, as nccl-tests users read them.
  CHECK(std::string(nccl_algo_name("ring")) == "Ring");
  CHECK(std::string(nccl_algo_name("tree")) == "Tree");
  CHECK(std::string(nccl_algo_name("nvls")) == "NVLS");
  CHECK(std::string(nccl_algo_name("nvls_tree")) == "NVLSTree");
  CHECK(std::string(nccl_algo_name("collnet")) == "CollNetDirect");
  CHECK(std::string(nccl_algo_name("msccl")) == "MSCCL");
  CHECK(std::string(nccl_algo_name("hierarchical")) == "-");
  // NCCL's protocols: LL, LL128 and Simple on the ring and the tree; Simple only in-network.
  CHECK(find_collective_algorithm("ring")->protocols == ProtocolSupport::kAll);
  CHECK(find_collective_algorithm("tree")->protocols == ProtocolSupport::kAll);
  CHECK(find_collective_algorithm("nvls")->protocols == ProtocolSupport::kSimpleOnly);
  CHECK(find_collective_algorithm("direct")->protocols == ProtocolSupport::kNone);
}

TEST_CASE("each algorithm builds exactly the operations its entry says it does") {
  const CollectiveOp ops[] = {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather,
                              CollectiveOp::kBroadcast,  CollectiveOp::kReduce,        CollectiveOp::kAllToAll,
                              CollectiveOp::kSendRecv};
  AlgorithmParams params;
  params.local_size = 4;  // 16 ranks: 4 nodes of 4, a power of two, whole nodes
  params.channels = 2;
  for (const CollectiveAlgorithm* a : collective_algorithms()) {
    REQUIRE(static_cast<bool>(a->does));
    REQUIRE(static_cast<bool>(a->build));
    for (CollectiveOp op : ops) {
      CAPTURE(a->name);
      CAPTURE(op_name(op));
      if (a->does(op)) {
        CHECK_NOTHROW(build_collective(a->name, op, 16, 1 << 20, params));
      } else {
        CHECK_THROWS_AS(build_collective(a->name, op, 16, 1 << 20, params), std::invalid_argument);
      }
    }
  }
}

TEST_CASE("each algorithm's step footprint: hand counts for 16 ranks on 2 channels") {
  FootprintFacts f;
  f.ranks = 16;
  f.channels = 2;
  f.log2_ranks = 4;
  CHECK(find_collective_algorithm("ring")->footprint(f).steps == 4 * 16 * 2);
  CHECK(find_collective_algorithm("ring")->footprint(f).peers == 4);
  CHECK(find_collective_algorithm("tree")->footprint(f).steps == 12);
  CHECK(find_collective_algorithm("halving_doubling")->footprint(f).steps == 16);
  CHECK(find_collective_algorithm("halving_doubling")->footprint(f).peers == 4);
  CHECK(find_collective_algorithm("direct")->footprint(f).peers == 16);
  // No NVLS on the node: a ring's figure; with it, 8 GPUs on 16 channels of 4 pieces:
  // 16 x 4 x (2 x 8 + 2) steps at 320 bytes.
  CHECK(find_collective_algorithm("nvls")->footprint(f).steps == 128);
  f.nvls_gpus = 8;
  f.nvls_channels = 16;
  f.nvls_pieces = 4;
  CHECK(find_collective_algorithm("nvls")->footprint(f).steps == 16 * 4 * 18);
  CHECK(find_collective_algorithm("nvls")->footprint(f).bytes_per_step == 320);
  CHECK(find_collective_algorithm("nvls_tree")->footprint(f).steps == 16 * 4 * 22);
}

TEST_CASE("the links' latency along each algorithm's critical path: hand counts") {
  // 16 ranks on 2 nodes, 1 us a step inside a node, 5 us between nodes.
  const WireFacts f{CollectiveOp::kAllReduce, 16, 2, 1.0, 5.0};
  // The ring and the tree pay NCCL's latency per simulated step (NCCL's pipeline), not at the start.
  CHECK(find_collective_algorithm("ring")->nccl_pipeline);
  CHECK(find_collective_algorithm("tree")->nccl_pipeline);
  CHECK_FALSE(static_cast<bool>(find_collective_algorithm("ring")->wire_latency_us));
  CHECK_FALSE(static_cast<bool>(find_collective_algorithm("tree")->wire_latency_us));
  CHECK(find_collective_algorithm("collnet")->wire_latency_us(f) == doctest::Approx(2 * 1.0 + 2 * 5.0));
  CHECK(find_collective_algorithm("nvls")->wire_latency_us(f) == doctest::Approx(1.0));
  CHECK(find_collective_algorithm("nvls_tree")->wire_latency_us(f) == doctest::Approx(1.0 + 2 * 5.0));
  CHECK_FALSE(static_cast<bool>(find_collective_algorithm("direct")->wire_latency_us));
}
