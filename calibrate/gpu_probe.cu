// The GPU probe (docs/calibration.md). Each figure: `warmup` untimed runs, then
// `repetitions` runs each timed with CUDA events on the device's stream.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibrate/gpu_probe.h"

namespace fabricsim {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }
}

void check_blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}

__global__ void empty_kernel() {}

__global__ void add_fp32(const float4* a, const float4* b, float4* c, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

// 16-byte loads of eight bf16 values, added as four pairs.
__global__ void add_bf16(const uint4* a, const uint4* b, uint4* c, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint4 x = a[i], y = b[i];
    uint4 z;
    const auto* px = reinterpret_cast<const __nv_bfloat162*>(&x);
    const auto* py = reinterpret_cast<const __nv_bfloat162*>(&y);
    auto* pz = reinterpret_cast<__nv_bfloat162*>(&z);
    for (int k = 0; k < 4; ++k) pz[k] = __hadd2(px[k], py[k]);
    c[i] = z;
  }
}

// Values in [-1, 1) from a hash of the index, so GEMM inputs are not all zero (zeros draw
// less power and would flatter the clock).
__global__ void fill_bf16(__nv_bfloat16* p, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = __float2bfloat16(static_cast<float>(h & 0xffff) / 32768.0f - 1.0f);
  }
}

// A dependent chain of loads: each address comes from the previous load, so the time per
// hop is the load latency. Volatile keeps every load out of the caches' reach.
__global__ void pointer_chase(const unsigned* next, int hops, unsigned* sink) {
  const volatile unsigned* p = next;
  unsigned at = 0;
  for (int i = 0; i < hops; ++i) at = p[at];
  *sink = at;
}

struct DeviceBuffers {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
};

// Times `body` on `d`'s stream; `units` per run over seconds, scaled by `scale`.
template <typename Body>
ProbeStat timed(const GpuProbeOptions& o, const DeviceBuffers& d, double units, double scale, Body&& body) {
  for (int i = 0; i < o.warmup; ++i) body();
  check(cudaStreamSynchronize(d.stream), "warm-up");
  std::vector<double> values;
  for (int i = 0; i < o.repetitions; ++i) {
    check(cudaEventRecord(d.start, d.stream), "cudaEventRecord");
    body();
    check(cudaEventRecord(d.stop, d.stream), "cudaEventRecord");
    check(cudaEventSynchronize(d.stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, d.start, d.stop), "cudaEventElapsedTime");
    values.push_back(units / (static_cast<double>(ms) * 1e-3) * scale);
  }
  return summarize(values);
}

int grid_for(int device) {
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return sms * 8;
}

}  // namespace

GpuProbeResult run_gpu_probe(const GpuProbeOptions& o, const std::function<void(const std::string&)>& progress) {
  GpuProbeResult r;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    r.outcome = GpuProbeResult::Outcome::kNoDevice;
    r.message = e != cudaSuccess ? std::string("no CUDA device: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")"
                                 : std::string("no CUDA device: none visible");
    return r;
  }
  r.outcome = GpuProbeResult::Outcome::kMeasured;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  r.report.driver = "CUDA driver " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) + ", runtime " +
                    std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);

  const std::size_t bytes = static_cast<std::size_t>(o.copy_bytes);
  std::vector<DeviceBuffers> buffers(static_cast<std::size_t>(count));
  for (int d = 0; d < count; ++d) {
    auto& b = buffers[static_cast<std::size_t>(d)];
    check(cudaSetDevice(d), "cudaSetDevice");
    check(cudaMalloc(&b.a, bytes), "cudaMalloc");
    check(cudaMalloc(&b.b, bytes), "cudaMalloc");
    check(cudaMalloc(&b.c, bytes), "cudaMalloc");
    check(cudaMemset(b.a, 0, bytes), "cudaMemset");
    check(cudaMemset(b.b, 0, bytes), "cudaMemset");
    check(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&b.start), "cudaEventCreate");
    check(cudaEventCreate(&b.stop), "cudaEventCreate");
  }
  void* host = nullptr;
  check(cudaMallocHost(&host, bytes), "cudaMallocHost");

  for (int d = 0; d < count; ++d) {
    auto& b = buffers[static_cast<std::size_t>(d)];
    check(cudaSetDevice(d), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, d), "cudaGetDeviceProperties");
    GpuDeviceFigures f;
    f.index = d;
    f.name = prop.name;
    progress("gpu " + std::to_string(d) + " (" + f.name + "): copies");
    const double n = static_cast<double>(bytes);
    f.d2d_GBps = timed(o, b, 2 * n, 1e-9, [&] { check(cudaMemcpyAsync(b.c, b.a, bytes, cudaMemcpyDeviceToDevice, b.stream), "copy"); });
    f.h2d_GBps = timed(o, b, n, 1e-9, [&] { check(cudaMemcpyAsync(b.a, host, bytes, cudaMemcpyHostToDevice, b.stream), "copy"); });
    f.d2h_GBps = timed(o, b, n, 1e-9, [&] { check(cudaMemcpyAsync(host, b.a, bytes, cudaMemcpyDeviceToHost, b.stream), "copy"); });

    progress("gpu " + std::to_string(d) + ": kernel launch");
    {
      constexpr int kLaunches = 1000;
      std::vector<double> per_launch;
      for (int i = 0; i < o.warmup + o.repetitions; ++i) {
        check(cudaStreamSynchronize(b.stream), "sync");
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < kLaunches; ++k) empty_kernel<<<1, 1, 0, b.stream>>>();
        check(cudaStreamSynchronize(b.stream), "sync");
        const auto t1 = std::chrono::steady_clock::now();
        check(cudaGetLastError(), "empty kernel");
        if (i >= o.warmup) per_launch.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kLaunches);
      }
      f.launch_us = summarize(per_launch);
    }

    progress("gpu " + std::to_string(d) + ": reduce fp32 and bf16");
    const int grid = grid_for(d);
    const std::size_t vectors = bytes / 16;
    f.reduce_fp32_GBps = timed(o, b, n, 1e-9, [&] {
      add_fp32<<<grid, 256, 0, b.stream>>>(static_cast<const float4*>(b.a), static_cast<const float4*>(b.b), static_cast<float4*>(b.c), vectors);
      check(cudaGetLastError(), "add_fp32");
    });
    f.reduce_bf16_GBps = timed(o, b, n, 1e-9, [&] {
      add_bf16<<<grid, 256, 0, b.stream>>>(static_cast<const uint4*>(b.a), static_cast<const uint4*>(b.b), static_cast<uint4*>(b.c), vectors);
      check(cudaGetLastError(), "add_bf16");
    });

    progress("gpu " + std::to_string(d) + ": bf16 matmul " + std::to_string(o.matmul_n) + "^3 (cuBLAS)");
    {
      const std::size_t m = static_cast<std::size_t>(o.matmul_n);
      __nv_bfloat16 *A = nullptr, *B = nullptr, *C = nullptr;
      check(cudaMalloc(&A, m * m * sizeof(__nv_bfloat16)), "cudaMalloc");
      check(cudaMalloc(&B, m * m * sizeof(__nv_bfloat16)), "cudaMalloc");
      check(cudaMalloc(&C, m * m * sizeof(__nv_bfloat16)), "cudaMalloc");
      fill_bf16<<<grid, 256, 0, b.stream>>>(A, m * m, 1u);
      fill_bf16<<<grid, 256, 0, b.stream>>>(B, m * m, 2u);
      check(cudaGetLastError(), "fill_bf16");
      cublasHandle_t handle = nullptr;
      check_blas(cublasCreate(&handle), "cublasCreate");
      check_blas(cublasSetStream(handle, b.stream), "cublasSetStream");
      const float one = 1.0f, zero = 0.0f;
      const int k = o.matmul_n;
      f.matmul_tflops = timed(o, b, 2.0 * static_cast<double>(m) * static_cast<double>(m) * static_cast<double>(m), 1e-12, [&] {
        check_blas(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, k, k, k, &one, A, CUDA_R_16BF, k, B, CUDA_R_16BF, k, &zero, C,
                                CUDA_R_16BF, k, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx");
      });
      cublasDestroy(handle);
      cudaFree(A);
      cudaFree(B);
      cudaFree(C);
    }
    r.report.devices.push_back(f);
  }

  // Every ordered pair: a copy from src's buffer into dst's, and, with peer access, the
  // latency of src's loads from dst's memory.
  constexpr int kChainLength = 4096, kStride = 1024, kHops = 5000;  // 4 KiB apart: a new line, a new page region
  for (int s = 0; s < count; ++s) {
    for (int t = 0; t < count; ++t) {
      if (s == t) continue;
      progress("peer " + std::to_string(s) + " -> " + std::to_string(t));
      GpuPeerFigures p;
      p.src = s;
      p.dst = t;
      int can = 0;
      check(cudaDeviceCanAccessPeer(&can, s, t), "cudaDeviceCanAccessPeer");
      p.peer_access = can != 0;
      check(cudaSetDevice(s), "cudaSetDevice");
      if (p.peer_access) {
        const cudaError_t pe = cudaDeviceEnablePeerAccess(t, 0);
        if (pe == cudaErrorPeerAccessAlreadyEnabled) {
          cudaGetLastError();
        } else {
          check(pe, "cudaDeviceEnablePeerAccess");
        }
      }
      auto& src = buffers[static_cast<std::size_t>(s)];
      auto& dst = buffers[static_cast<std::size_t>(t)];
      p.bandwidth_GBps = timed(o, src, static_cast<double>(bytes), 1e-9,
                               [&] { check(cudaMemcpyPeerAsync(dst.c, t, src.a, s, bytes, src.stream), "cudaMemcpyPeerAsync"); });
      if (p.peer_access) {
        std::vector<unsigned> chain(static_cast<std::size_t>(kChainLength) * kStride, 0);
        for (int i = 0; i < kChainLength; ++i) {
          chain[static_cast<std::size_t>(i) * kStride] = static_cast<unsigned>(((i + 1) % kChainLength) * kStride);
        }
        check(cudaMemcpy(dst.b, chain.data(), chain.size() * sizeof(unsigned), cudaMemcpyHostToDevice), "cudaMemcpy");
        unsigned* sink = static_cast<unsigned*>(src.c);
        std::vector<double> per_load;
        const DeviceBuffers& d = src;
        for (int i = 0; i < o.warmup + o.repetitions; ++i) {
          check(cudaEventRecord(d.start, d.stream), "cudaEventRecord");
          pointer_chase<<<1, 1, 0, d.stream>>>(static_cast<const unsigned*>(dst.b), kHops, sink);
          check(cudaEventRecord(d.stop, d.stream), "cudaEventRecord");
          check(cudaEventSynchronize(d.stop), "pointer_chase");
          float ms = 0;
          check(cudaEventElapsedTime(&ms, d.start, d.stop), "cudaEventElapsedTime");
          if (i >= o.warmup) per_load.push_back(static_cast<double>(ms) * 1e3 / kHops);
        }
        p.latency_us = summarize(per_load);
      }
      r.report.peers.push_back(p);
    }
  }

  cudaFreeHost(host);
  for (int d = 0; d < count; ++d) {
    auto& b = buffers[static_cast<std::size_t>(d)];
    cudaSetDevice(d);
    cudaFree(b.a);
    cudaFree(b.b);
    cudaFree(b.c);
    cudaEventDestroy(b.start);
    cudaEventDestroy(b.stop);
    cudaStreamDestroy(b.stream);
  }
  return r;
}

}  // namespace fabricsim
