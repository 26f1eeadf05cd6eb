// NCCL's double binary tree (src/graph/trees.cc), checked against the trees its comments
// draw and against trees worked out by hand from its bit rules.
#include <doctest/doctest.h>

#include <vector>

#include "workloads/collectives/nccl_trees.h"

using namespace fabricsim;

namespace {

std::vector<int> parents(const BinaryTree& t) { return t.parent; }

}  // namespace

TEST_CASE("NCCL's binary tree on 14 ranks is the one trees.cc draws: 0 - 8, 8 - {4, 12}, leaves the odd ranks") {
  const BinaryTree t = nccl_binary_tree(14);
  //            0  1  2  3  4  5  6  7  8  9  10  11  12  13
  CHECK(parents(t) == std::vector<int>{-1, 2, 4, 2, 8, 6, 4, 6, 0, 10, 12, 10, 8, 12});
  CHECK(t.children[0] == std::array<int, 2>{-1, 8});
  CHECK(t.children[8] == std::array<int, 2>{4, 12});
  CHECK(t.children[12] == std::array<int, 2>{10, 13});  // 12 + 2 = 14 is out: 12 + 1
  for (int r = 1; r < 14; r += 2) CHECK(t.children[static_cast<std::size_t>(r)] == std::array<int, 2>{-1, -1});
  CHECK(t.top_down.front() == 0);
  CHECK(t.top_down.size() == 14);
}

TEST_CASE("NCCL's second tree: the mirror on 12 ranks as trees.cc draws it, a shift by one on odd counts") {
  // 12 ranks: the first tree is 0 - 8, 8 - {4, 10}, 4 - {2, 6}, 10 - {9, 11}; mirrored
  // (r -> 11 - r): 11 - 3, 3 - {7, 1}, 7 - {9, 5}, 1 - {2, 0}.
  const BinaryTree m = nccl_double_tree(12, 1);
  CHECK(m.parent[11] == -1);
  CHECK(m.children[11] == std::array<int, 2>{-1, 3});
  CHECK(m.children[3] == std::array<int, 2>{7, 1});
  CHECK(m.children[7] == std::array<int, 2>{9, 5});
  CHECK(m.children[1] == std::array<int, 2>{2, 0});
  // 3 ranks: the first tree is a chain 0 - 2 - 1 (2's second child, 3, is out); shifted
  // by one (rank r takes rank r - 1's place): 1 - 0 - 2.
  CHECK(parents(nccl_double_tree(3, 0)) == std::vector<int>{-1, 2, 0});
  CHECK(parents(nccl_double_tree(3, 1)) == std::vector<int>{1, -1, 0});
  // 4 ranks: 0 - 2 - {1, 3} and its mirror 3 - 1 - {2, 0}.
  CHECK(parents(nccl_double_tree(4, 0)) == std::vector<int>{-1, 2, 0, 2});
  CHECK(parents(nccl_double_tree(4, 1)) == std::vector<int>{1, 3, 1, -1});
}

TEST_CASE("the double tree's busiest rank: once its share on 2 ranks, 1.5 times on 3, twice from 4") {
  // 2: each rank the root of one tree (one child) and the child in the other: 2 links.
  // 3: rank 2 is the middle of the first chain (2 links) and a leaf of the second (1).
  // 4: rank 2 has a parent and two children in the first tree and a parent in the second.
  CHECK(nccl_double_tree_load(2) == 1.0);
  CHECK(nccl_double_tree_load(3) == 1.5);
  CHECK(nccl_double_tree_load(4) == 2.0);
  CHECK(nccl_double_tree_load(8) == 2.0);
  CHECK(nccl_double_tree_load(1) == 0.0);
}
