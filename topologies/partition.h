#pragma once
// Splitting a fabric for a parallel run: every node gets a partition, cutting only
// links between partitions. By structure: nodes joined by links shorter than the
// fabric's longest are never split (a DGX node's NVLink and PCIe stay whole, so the
// lookahead is a fabric link's latency); hosts go to partitions in contiguous runs of
// their numbers, which the builders lay out by pod, node or torus slab, in equal shares;
// then switches, outward from the hosts, join the partition they have most links to
// (ties: the partition with fewest ports so far), so pods and their aggregation layer
// stay together and core switches spread evenly.
// By graph: for custom graphs, whose host numbers say nothing of their structure, METIS
// (where the build found it) splits the same units, each weighted by its link ends (a
// node's events grow with its ports), minimising the links cut between them.
#include <cstdint>
#include <vector>

#include "topologies/topology.h"

namespace fabricsim {

struct Partitioning {
  std::vector<std::uint32_t> node_partition;  // by topology node
  std::uint32_t partitions = 1;
  std::size_t cut_links = 0;
  Time lookahead = kTimeMax;  // the smallest latency of a cut link
  std::vector<std::size_t> ports;  // per partition: link ends (a proxy for events)
  const char* method = "structure";  // or "metis"
};

// The fabric's longest link latency: the links a split cuts, so a split run's lookahead.
Time longest_link_latency(const Topology& topology);

// Each node's unit, named by its lowest-numbered node: nodes joined by links shorter
// than the fabric's longest, which no split cuts (a DGX node). A group of hosts in one
// unit is in one partition however a run is split.
std::vector<std::uint32_t> node_units(const Topology& topology);

enum class PartitionMethod : std::uint8_t { kStructure, kGraph };
// Whether kGraph has a graph partitioner behind it (else it falls back to kStructure).
bool graph_partitioner_available();

Partitioning partition_topology(const Topology& topology, std::uint32_t partitions,
                                PartitionMethod method = PartitionMethod::kStructure);

}  // namespace fabricsim
