// NCCL's double binary tree (src/graph/trees.cc, ncclGetBtree and ncclGetDtree): the
// shape of the trees its Tree and NVLS-tree AllReduce run across nodes.
#pragma once

#include <array>
#include <vector>

namespace fabricsim {

// One binary tree over ranks 0..n-1: each rank's parent (-1 at the root) and children
// (-1 where none), and the ranks from the root down, each after its parent.
struct BinaryTree {
  std::vector<int> parent;
  std::vector<std::array<int, 2>> children;
  std::vector<int> top_down;
};

// NCCL's first tree (ncclGetBtree): rooted at rank 0, whose one child is the highest power
// of two below n; a rank's parent and children follow from its lowest set bit, so leaves
// and interior ranks alternate (on 4 ranks: 0 - 2 - {1, 3}).
BinaryTree nccl_binary_tree(int n);

// Tree `which` (0 or 1) of NCCL's double binary tree on n ranks: the first is the binary
// tree; the second mirrors it (rank r takes rank n-1-r's place) for even n and shifts it
// by one rank for odd n, so most ranks are interior in one tree and a leaf in the other.
BinaryTree nccl_double_tree(int n, int which);

// What the busiest rank of the double tree receives (and sends) in an AllReduce, in units
// of the data it reduces: each tree carries half, up from every child and down from the
// parent. 1 on two ranks; 1.5 on three; 2 from four on, where a rank has a parent and two
// children in one tree.
double nccl_double_tree_load(int n);

}  // namespace fabricsim
