#include "workloads/nccl_protocol.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace fabricsim {

namespace {
// NCCL's tuning table (microseconds): the ring's base latency and per-step hardware
// latency per protocol, for NVLink, PCIe and the network.
struct RingFigures {
  double base;
  double nvlink;
  double pcie;
  double net;
};
RingFigures figures(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kLL: return {3.6, 0.47, 1.0, 2.7};
    case NcclProtocol::kLL128: return {10.0, 1.9, 2.5, 4.0};
    case NcclProtocol::kSimple: return {8.4, 3.4, 5.7, 9.6};
    case NcclProtocol::kNone: break;
  }
  return {0, 0, 0, 0};
}
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
  const RingFigures f = figures(p);
  const int n = std::max(2, ranks), m = std::max(1, nodes);
  const int steps = op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
  const int inter = m == 1 ? 0 : op == CollectiveOp::kAllReduce ? 2 * (m - 1) : m - 1;
  double intra = nvlink ? f.nvlink : f.pcie;
  if (m > 1 && p == NcclProtocol::kLL) intra *= 1.8;  // NCCL's multi-node LL correction
  return f.base + (steps - inter) * intra + inter * f.net;
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
