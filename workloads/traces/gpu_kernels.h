#pragma once
// How long a GPU takes for one kernel, from single-GPU figures only: a GEMM by its shape
// (tile and wave quantization against the measured largest-GEMM rate, or the memory
// roofline where it reads and writes more than it computes), a memory-bound kernel by
// the bytes it moves (docs/traces.md, "The compute model").
#include <cstdint>
#include <string>

namespace fabricsim {

struct GpuProfile {
  std::string name = "gpu";
  // The constant model: every FLOP at this rate (used where `sms` is 0).
  double achieved_tflops = 400;
  // The kernel model (used where `sms` > 0).
  double matmul_tflops = 0;  // the largest GEMM's measured rate (dense, 16-bit inputs)
  double memory_gbps = 0;    // what a streaming kernel reaches of the HBM (GB/s)
  int sms = 0;               // streaming multiprocessors: one GEMM tile each per wave
  int tile_m = 256;          // the GEMM tile (cuBLAS's largest for 16-bit inputs)
  int tile_n = 128;

  bool kernel_model() const { return sms > 0; }
};

// C[m x n] = A[m x k] B[k x n], `batch` times (a strided batched GEMM), inputs and output
// of `element_bytes` each. Seconds.
double gemm_seconds(const GpuProfile& gpu, double m, double n, double k, double batch = 1, int element_bytes = 2);

// A kernel that reads and writes `bytes` in all and computes little. Seconds.
double memory_seconds(const GpuProfile& gpu, double bytes);

}  // namespace fabricsim
