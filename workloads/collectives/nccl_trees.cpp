#include "workloads/collectives/nccl_trees.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim {
namespace {

// The lowest set bit of `rank`, or the first power of two at or above n for rank 0.
int lowest_bit(int n, int rank) {
  int bit = 1;
  while (bit < n && (bit & rank) == 0) bit <<= 1;
  return bit;
}

void order_top_down(BinaryTree& t, int root) {
  t.top_down.clear();
  t.top_down.push_back(root);
  for (std::size_t i = 0; i < t.top_down.size(); ++i) {
    for (int child : t.children[static_cast<std::size_t>(t.top_down[i])]) {
      if (child >= 0) t.top_down.push_back(child);
    }
  }
  if (t.top_down.size() != t.parent.size()) throw std::logic_error("nccl_trees: not one tree");
}

BinaryTree relabel(const BinaryTree& t, int n, int (*map)(int rank, int n)) {
  BinaryTree out;
  out.parent.assign(static_cast<std::size_t>(n), -1);
  out.children.assign(static_cast<std::size_t>(n), {-1, -1});
  int root = -1;
  for (int r = 0; r < n; ++r) {
    const int to = map(r, n);
    const int up = t.parent[static_cast<std::size_t>(r)];
    out.parent[static_cast<std::size_t>(to)] = up < 0 ? -1 : map(up, n);
    if (up < 0) root = to;
    for (int i = 0; i < 2; ++i) {
      const int child = t.children[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)];
      out.children[static_cast<std::size_t>(to)][static_cast<std::size_t>(i)] = child < 0 ? -1 : map(child, n);
    }
  }
  order_top_down(out, root);
  return out;
}

}  // namespace

BinaryTree nccl_binary_tree(int n) {
  if (n < 1) throw std::invalid_argument("nccl_binary_tree: no ranks");
  BinaryTree t;
  t.parent.assign(static_cast<std::size_t>(n), -1);
  t.children.assign(static_cast<std::size_t>(n), {-1, -1});
  for (int rank = 0; rank < n; ++rank) {
    const int bit = lowest_bit(n, rank);
    auto& kids = t.children[static_cast<std::size_t>(rank)];
    if (rank == 0) {
      kids[1] = n > 1 ? bit >> 1 : -1;
      continue;
    }
    int up = (rank ^ bit) | (bit << 1);
    if (up >= n) up = rank ^ bit;
    t.parent[static_cast<std::size_t>(rank)] = up;
    int low = bit >> 1;
    kids[0] = low == 0 ? -1 : rank - low;
    int down = low == 0 ? -1 : rank + low;
    while (down >= n) {
      low >>= 1;
      down = low == 0 ? -1 : rank + low;
    }
    kids[1] = down;
  }
  order_top_down(t, 0);
  return t;
}

BinaryTree nccl_double_tree(int n, int which) {
  BinaryTree first = nccl_binary_tree(n);
  if (which == 0) return first;
  if (n % 2 == 0) return relabel(first, n, [](int r, int m) { return m - 1 - r; });
  return relabel(first, n, [](int r, int m) { return (r + 1) % m; });
}

double nccl_double_tree_load(int n) {
  const BinaryTree trees[2] = {nccl_double_tree(n, 0), nccl_double_tree(n, 1)};
  int most = 0;
  for (int r = 0; r < n; ++r) {
    int links = 0;
    for (const BinaryTree& t : trees) {
      links += t.parent[static_cast<std::size_t>(r)] >= 0 ? 1 : 0;
      for (int child : t.children[static_cast<std::size_t>(r)]) links += child >= 0 ? 1 : 0;
    }
    most = std::max(most, links);
  }
  return most / 2.0;
}

}  // namespace fabricsim
