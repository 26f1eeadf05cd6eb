#include "workloads/nccl_protocol.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace fabricsim {

namespace {
// NCCL's tuning table (microseconds): an algorithm's base latency and per-hop hardware
// latency per protocol, for NVLink, PCIe and the network.
struct HopFigures {
  double base;
  double nvlink;
  double pcie;
  double net;
};
HopFigures figures(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kLL: return {3.6, 0.47, 1.0, 2.7};
    case NcclProtocol::kLL128: return {10.0, 1.9, 2.5, 4.0};
    case NcclProtocol::kSimple: return {8.4, 3.4, 5.7, 9.6};
    case NcclProtocol::kNone: break;
  }
  return {0, 0, 0, 0};
}
// The tree's: base latency, per-hop NVLink, PCIe and network latency.
HopFigures tree_figures(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kLL: return {6.8, 0.6, 1.0, 5.0};
    case NcclProtocol::kLL128: return {14.0, 1.25, 1.9, 8.5};
    case NcclProtocol::kSimple: return {0.0, 4.0, 6.0, 14.0};
    case NcclProtocol::kNone: break;
  }
  return {0, 0, 0, 0};
}
int node_class(int nodes) { return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2; }  // NCCL's N1 / N2 / N4
}  // namespace

const char* protocol_name(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kSimple: return "Simple";
    case NcclProtocol::kLL: return "LL";
    case NcclProtocol::kLL128: return "LL128";
    case NcclProtocol::kNone: break;
  }
  return "-";
}

std::optional<NcclProtocol> protocol_from_name(std::string_view name) {
  std::string s(name);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "none") return NcclProtocol::kNone;
  if (s == "simple") return NcclProtocol::kSimple;
  if (s == "ll") return NcclProtocol::kLL;
  if (s == "ll128") return NcclProtocol::kLL128;
  return std::nullopt;
}

double protocol_wire_factor(NcclProtocol p) {
  if (p == NcclProtocol::kLL) return 4.0;  // flags double the bytes; NCCL's model halves LL's rate again
  if (p == NcclProtocol::kLL128) return 128.0 / 120.0;
  return 1.0;
}

double nccl_ring_latency_us(NcclProtocol p, CollectiveOp op, int ranks, int nodes, bool nvlink) {
  if (p == NcclProtocol::kNone) return 0;
  const HopFigures f = figures(p);
  const int n = std::max(2, ranks), m = std::max(1, nodes);
  const int steps = op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
  const int inter = m == 1 ? 0 : op == CollectiveOp::kAllReduce ? 2 * (m - 1) : m - 1;
  double intra = nvlink ? f.nvlink : f.pcie;
  if (m > 1 && p == NcclProtocol::kLL) intra *= 1.8;  // NCCL's multi-node LL correction
  return f.base + (steps - inter) * intra + inter * f.net;
}

double nccl_tree_latency_us(NcclProtocol p, int ranks, int nodes, bool nvlink) {
  if (p == NcclProtocol::kNone) return 0;
  const HopFigures f = tree_figures(p);
  const int m = std::max(1, nodes);
  const int per_node = std::max(1, ranks / m);
  double intra = nvlink ? f.nvlink : f.pcie;
  if (m > 1 && p == NcclProtocol::kLL) intra *= 1.8;  // the multi-node LL correction, as the ring's
  return f.base + 2 * ((per_node - 1) * intra + floor_log2(m) * f.net);
}

int floor_log2(int n) {
  int l = 0;
  while ((2 << l) <= n) ++l;
  return l;
}

double nccl_collnet_latency_us(int gpus_per_node) {
  const double ppn = std::max(1, gpus_per_node);
  return 2 * (std::min(1.0, ppn - 1) * 8.0 + (ppn - 1) * 0.5) + 10.7;
}

double nccl_tree_busbw_GBps(NcclProtocol p, double base, int nodes, int channels) {
  static constexpr double kTreeCap[3] = {38.7, 41.4, 36.0};
  static constexpr double kLLCap[3] = {87.7, 22.5, 19.0};
  static constexpr double kLL128Cap[3] = {36.7, 36.7, 29.0};
  const int c = node_class(nodes);
  const int ch = std::max(1, channels);
  double bus = std::min(base * 0.92, ch * kTreeCap[c]);
  if (p == NcclProtocol::kLL) bus = std::min(bus / 3.8, kLLCap[c]);
  if (p == NcclProtocol::kLL128) bus = std::min(bus * (nodes <= 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * kLL128Cap[c]);
  return bus;
}

double nccl_tree_correction(NcclProtocol p, std::int64_t bytes) {
  static constexpr double kFactor[3][23] = {
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},   // LL
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},  // LL128
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};       // Simple
  const int row = p == NcclProtocol::kLL ? 0 : p == NcclProtocol::kLL128 ? 1 : 2;
  int log_size = 0;
  for (std::int64_t n = bytes >> 6; n > 1; n >>= 1) ++log_size;
  if (log_size >= 23 || p == NcclProtocol::kNone) return 1.0;
  return kFactor[row][log_size];
}

double nccl_ring_busbw_GBps(NcclProtocol p, double simple, CollectiveOp op, int nodes, int channels) {
  if (p == NcclProtocol::kLL) {
    const bool quarter = nodes > 1 || op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduce;
    return simple * (quarter ? 0.25 : 1.0 / 3.0);
  }
  if (p == NcclProtocol::kLL128) {
    double per_channel = 16.7;  // AllReduce
    if (op == CollectiveOp::kBroadcast) per_channel = 18.8;
    if (op == CollectiveOp::kReduce) per_channel = 12.0;
    if (op == CollectiveOp::kAllGather) per_channel = 18.3;
    if (op == CollectiveOp::kReduceScatter) per_channel = 15.2;
    return std::min(simple * 0.92, per_channel * std::max(1, channels));
  }
  return simple;
}

}  // namespace fabricsim
