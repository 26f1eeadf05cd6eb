#pragma once
// The memory a run will need, worked out from the topology graph and the config before
// anything big is built: the compiled network (ports, links, endpoints, switches), the
// routing tables, the packets in flight, the messages and the results. `validate`
// prints it; a run refuses to start (exit 2) when it exceeds the memory available or
// --memory-limit, instead of failing in an allocation after minutes.
#include <cstdint>
#include <string>

#include "app/config/config.h"
#include "topologies/topology.h"

namespace fabricsim {

struct MemoryEstimate {
  std::uint64_t base = 0;       // the program and its libraries
  std::uint64_t topology = 0;   // the graph with its names
  std::uint64_t network = 0;    // endpoints, switches, ports, links, buffers' accounting
  std::uint64_t routes = 0;     // routing tables and their compilation
  std::uint64_t packets = 0;    // packets in flight or queued, with their queue slots
  std::uint64_t packets_in_flight = 0;
  std::uint64_t messages = 0;   // message slots, flow schedules, traces
  std::uint64_t results = 0;    // results.json as written
  std::uint64_t total() const { return base + topology + network + routes + packets + messages + results; }
  std::string describe() const;  // "1.27 GiB (network 0.80, routes 0.04, ...)"
};

MemoryEstimate estimate_memory(const ScenarioConfig& config, const Topology& topology);

// What this machine has free now (MemAvailable), in bytes; 0 if unknown.
std::uint64_t available_memory();

}  // namespace fabricsim
