#pragma once
// `fabricsim calibrate nic`: RC RDMA WRITE bandwidth over a message-size sweep and a
// ping-pong latency between two hosts, with libibverbs, the way perftest's ib_write_bw and
// ib_write_lat measure them. Queue pair details travel over a TCP side channel.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibrate/log_import.h"

namespace fabricsim {

struct NicProbeOptions {
  bool server = false;
  std::string host;        // the server, for the client
  int port = 18515;        // TCP side channel (perftest's default)
  std::string device;      // empty: the first RDMA device
  int ib_port = 1;
  int gid_index = -1;      // -1: no GID (InfiniBand with LIDs); RoCE needs one
  std::int64_t min_bytes = 2;
  std::int64_t max_bytes = 8 << 20;
  int bandwidth_iterations = 5000;  // per size, fewer where that would exceed 4 GiB moved
  int latency_iterations = 1000;
  int warmup = 100;
};

struct NicProbeResult {
  enum class Outcome { kMeasured, kNoDevice } outcome = Outcome::kNoDevice;
  std::string message;       // one line for kNoDevice
  std::string device;        // what was measured
  std::string link_layer;    // InfiniBand or Ethernet
  PerftestLog bandwidth;     // client only: the sweep, as ib_write_bw would print it
  PerftestLog latency;       // client only: one-way latency (half the round trip), per size
};

// Throws std::runtime_error for failures after a device was opened (connection refused,
// a QP that will not come up, a failed work completion).
NicProbeResult run_nic_probe(const NicProbeOptions& options, const std::function<void(const std::string&)>& progress);

}  // namespace fabricsim
