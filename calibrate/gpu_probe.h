#pragma once
// `fabricsim calibrate gpu`: what this machine's GPUs achieve, measured with CUDA (built
// only where nvcc is found). Every figure is timed with CUDA events after warm-up runs and
// summarised over repetitions.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibrate/probe_stats.h"

namespace fabricsim {

struct GpuDeviceFigures {
  int index = 0;
  std::string name;
  ProbeStat d2d_GBps;          // device-to-device copy, read plus write (CUDA bandwidthTest's convention)
  ProbeStat h2d_GBps;          // pinned host to device
  ProbeStat d2h_GBps;          // device to pinned host
  ProbeStat launch_us;         // an empty kernel, launched back to back, per launch
  ProbeStat reduce_fp32_GBps;  // c = a + b, bytes of one operand per second
  ProbeStat reduce_bf16_GBps;
  ProbeStat matmul_tflops;     // cuBLAS bf16 GEMM, n x n x n, fp32 accumulate
};

struct GpuPeerFigures {
  int src = 0, dst = 0;
  bool peer_access = false;  // direct loads and copies (NVLink or PCIe P2P); else staged through the host
  ProbeStat bandwidth_GBps;  // cudaMemcpyPeer from src to dst
  ProbeStat latency_us;      // a dependent chain of loads from dst's memory, per load (peer access only)
};

struct GpuProbeReport {
  std::string driver;  // CUDA driver and runtime versions
  std::vector<GpuDeviceFigures> devices;
  std::vector<GpuPeerFigures> peers;
};

struct GpuProbeOptions {
  int warmup = 3;
  int repetitions = 20;
  std::int64_t copy_bytes = 256LL << 20;
  int matmul_n = 8192;
};

struct GpuProbeResult {
  enum class Outcome { kMeasured, kNoDevice, kNotBuilt } outcome = Outcome::kNotBuilt;
  std::string message;  // one line, for kNoDevice and kNotBuilt
  GpuProbeReport report;
};

// Progress lines go to `progress`; CUDA failures after a device was found throw std::runtime_error.
GpuProbeResult run_gpu_probe(const GpuProbeOptions& options, const std::function<void(const std::string&)>& progress);

}  // namespace fabricsim
