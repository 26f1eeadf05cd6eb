#include "topologies/partition.h"

#include <algorithm>
#include <map>
#include <numeric>

#ifdef FABRICSIM_HAVE_METIS
#include <metis.h>
#endif

namespace fabricsim {

namespace {
struct UnionFind {
  std::vector<std::uint32_t> parent;
  explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
  std::uint32_t find(std::uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(std::uint32_t a, std::uint32_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};
}  // namespace

Time longest_link_latency(const Topology& t) {
  Time longest = 0;
  for (const TopologyLink& l : t.links()) longest = std::max(longest, l.latency);
  return longest;
}

std::vector<std::uint32_t> node_units(const Topology& t) {
  const Time longest = longest_link_latency(t);
  UnionFind units(t.nodes().size());
  for (const TopologyLink& l : t.links()) {
    if (l.latency < longest) units.join(l.a, l.b);
  }
  std::vector<std::uint32_t> unit(t.nodes().size());
  for (std::uint32_t v = 0; v < unit.size(); ++v) unit[v] = units.find(v);
  return unit;
}

bool graph_partitioner_available() {
#ifdef FABRICSIM_HAVE_METIS
  return true;
#else
  return false;
#endif
}

namespace {
#ifdef FABRICSIM_HAVE_METIS
// METIS's k-way split of the units (`roots`), weighted by their link ends, edges by the
// links between them (`adjacent`: per unit, a neighbouring unit per link). False when it
// cannot (fewer units than partitions, or a partition left empty).
bool metis_split(const std::vector<std::uint32_t>& roots, const std::vector<std::vector<std::uint32_t>>& adjacent,
                 const std::vector<std::size_t>& unit_ports, std::uint32_t parts,
                 std::vector<std::uint32_t>& unit_partition) {
  if (roots.size() < parts) return false;
  std::vector<idx_t> vertex(adjacent.size(), -1);
  for (std::size_t i = 0; i < roots.size(); ++i) vertex[roots[i]] = static_cast<idx_t>(i);
  std::vector<std::map<idx_t, idx_t>> edges(roots.size());  // parallel links merged
  for (std::size_t i = 0; i < roots.size(); ++i) {
    for (std::uint32_t to : adjacent[roots[i]]) ++edges[i][vertex[to]];
  }
  std::vector<idx_t> xadj{0}, adjncy, adjwgt, vwgt;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    for (const auto& [to, w] : edges[i]) {
      adjncy.push_back(to);
      adjwgt.push_back(w);
    }
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
    vwgt.push_back(static_cast<idx_t>(std::max<std::size_t>(1, unit_ports[roots[i]])));
  }
  idx_t nvtxs = static_cast<idx_t>(roots.size()), ncon = 1, nparts = static_cast<idx_t>(parts), objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // the same split every time
  std::vector<idx_t> part(roots.size(), 0);
  if (METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.data(), nullptr, adjwgt.data(), &nparts,
                          nullptr, nullptr, options, &objval, part.data()) != METIS_OK) {
    return false;
  }
  // On tiny graphs METIS may leave a partition empty: the structural split does better.
  std::vector<bool> used(parts, false);
  for (idx_t p : part) used[static_cast<std::size_t>(p)] = true;
  if (std::find(used.begin(), used.end(), false) != used.end()) return false;
  for (std::size_t i = 0; i < roots.size(); ++i) unit_partition[roots[i]] = static_cast<std::uint32_t>(part[i]);
  return true;
}
#endif
}  // namespace

Partitioning partition_topology(const Topology& t, std::uint32_t partitions, PartitionMethod method) {
  const std::size_t n = t.nodes().size();
  Partitioning out;
  out.partitions = std::max<std::uint32_t>(1, partitions);
  out.node_partition.assign(n, 0);
  out.ports.assign(out.partitions, 0);
  if (out.partitions == 1 || n == 0) {
    out.ports[0] = 2 * t.links().size();
    return out;
  }
  // Units: nodes joined by links shorter than the longest stay together.
  const std::vector<std::uint32_t> unit = node_units(t);
  std::vector<std::vector<std::uint32_t>> adjacent(n);  // unit root -> roots of neighbouring units (with repeats)
  std::vector<std::size_t> unit_ports(n, 0);
  for (const TopologyLink& l : t.links()) {
    const std::uint32_t a = unit[l.a], b = unit[l.b];
    unit_ports[a] += 1;
    unit_ports[b] += 1;
    if (a != b) {
      adjacent[a].push_back(b);
      adjacent[b].push_back(a);
    }
  }
  constexpr std::uint32_t kNone = UINT32_MAX;
  std::vector<std::uint32_t> unit_partition(n, kNone);
  bool split_by_graph = false;
#ifdef FABRICSIM_HAVE_METIS
  if (method == PartitionMethod::kGraph) {
    std::vector<std::uint32_t> roots;
    for (std::uint32_t v = 0; v < n; ++v) {
      if (unit[v] == v) roots.push_back(v);
    }
    if (metis_split(roots, adjacent, unit_ports, out.partitions, unit_partition)) {
      out.method = "metis";
      split_by_graph = true;
      for (std::uint32_t u : roots) out.ports[unit_partition[u]] += unit_ports[u];
    }
  }
#else
  (void)method;
#endif
  // Hosts in contiguous runs of their numbers, in equal shares (a unit goes where its
  // first host falls).
  const std::size_t hosts = t.host_count();
  for (std::size_t h = 0; !split_by_graph && h < hosts; ++h) {
    const std::uint32_t u = unit[t.host_node(static_cast<std::uint32_t>(h))];
    if (unit_partition[u] != kNone) continue;
    unit_partition[u] = static_cast<std::uint32_t>(h * out.partitions / hosts);
    out.ports[unit_partition[u]] += unit_ports[u];
  }
  // Then outward, a layer at a time: each unit joins the partition it has most links to.
  std::vector<std::uint32_t> frontier;
  for (std::uint32_t u = 0; u < n; ++u) {
    if (unit[u] == u && unit_partition[u] != kNone) frontier.push_back(u);
  }
  std::vector<std::size_t> votes(out.partitions);
  for (;;) {
    std::vector<std::uint32_t> next;
    for (std::uint32_t u : frontier) {
      for (std::uint32_t v : adjacent[u]) {
        if (unit_partition[v] == kNone) next.push_back(v);
      }
    }
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    if (next.empty()) break;
    for (std::uint32_t v : next) {
      std::fill(votes.begin(), votes.end(), 0);
      for (std::uint32_t w : adjacent[v]) {
        if (unit_partition[w] != kNone) ++votes[unit_partition[w]];
      }
      std::uint32_t best = 0;
      for (std::uint32_t q = 1; q < out.partitions; ++q) {
        if (votes[q] > votes[best] || (votes[q] == votes[best] && out.ports[q] < out.ports[best])) best = q;
      }
      unit_partition[v] = best;
      out.ports[best] += unit_ports[v];
    }
    frontier = std::move(next);
  }
  // Units no host reaches (a switch with no links): the least loaded partition.
  for (std::uint32_t u = 0; u < n; ++u) {
    if (unit[u] != u || unit_partition[u] != kNone) continue;
    const auto q = static_cast<std::uint32_t>(std::min_element(out.ports.begin(), out.ports.end()) - out.ports.begin());
    unit_partition[u] = q;
    out.ports[q] += unit_ports[u];
  }
  for (std::uint32_t v = 0; v < n; ++v) out.node_partition[v] = unit_partition[unit[v]];
  for (const TopologyLink& l : t.links()) {
    if (out.node_partition[l.a] != out.node_partition[l.b]) {
      ++out.cut_links;
      out.lookahead = std::min(out.lookahead, l.latency);
    }
  }
  return out;
}

}  // namespace fabricsim
