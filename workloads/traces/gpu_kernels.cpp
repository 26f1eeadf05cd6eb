#include "workloads/traces/gpu_kernels.h"

#include <algorithm>
#include <cmath>

namespace fabricsim {

double gemm_seconds(const GpuProfile& gpu, double m, double n, double k, double batch, int element_bytes) {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return 0;
  // Each SM computes one output tile at a time; a wave is one tile per SM, and a wave
  // partly filled takes as long as a full one. The tile goes whichever way gives fewer.
  const auto tiles = [&](double tm, double tn) { return std::ceil(m / tm) * std::ceil(n / tn); };
  const double per_batch = std::min(tiles(gpu.tile_m, gpu.tile_n), tiles(gpu.tile_n, gpu.tile_m));
  const double waves = std::ceil(batch * per_batch / gpu.sms);
  const double tile_flops = 2.0 * gpu.tile_m * gpu.tile_n * k;
  const double compute = waves * tile_flops / (gpu.matmul_tflops * 1e12 / gpu.sms);
  // Each operand read once and the result written once, at best.
  const double memory = memory_seconds(gpu, batch * (m * k + k * n + m * n) * element_bytes);
  return std::max(compute, memory);
}

double memory_seconds(const GpuProfile& gpu, double bytes) { return bytes / (gpu.memory_gbps * 1e9); }

}  // namespace fabricsim
