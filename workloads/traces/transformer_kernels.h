#pragma once
// The kernels of a Megatron-LM GPT layer on one tensor-parallel rank for one micro-batch,
// timed by the kernel model (gpu_kernels.h): the GEMMs by their shapes and the fused
// element-wise kernels (layer norms, scale-mask-softmax, dropouts, bias-GeLU,
// bias-dropout-add) by the bytes they move. Layer norms and dropouts run on every
// tensor-parallel rank over the whole hidden size, as without sequence parallelism.
#include <cstdint>

#include "workloads/traces/gpu_kernels.h"

namespace fabricsim {

struct ModelSpec;
struct ParallelSpec;

// Seconds, split where the trace puts the tensor-parallel AllReduces.
struct LayerKernelSeconds {
  double attention_forward = 0;   // layer norm, QKV, scores, softmax, dropout, context, projection
  double mlp_forward = 0;         // bias-dropout-adds, layer norm, FC1, bias-GeLU, FC2
  double attention_backward = 0;  // each GEMM's data and weight gradients, each kernel's backward
  double mlp_backward = 0;
  double head_forward = 0;        // logits GEMM and the vocabulary-parallel cross entropy in FP32
  double head_backward = 0;
};

LayerKernelSeconds transformer_kernel_seconds(const ModelSpec& model, const ParallelSpec& par, const GpuProfile& gpu);

// The mixed-precision Adam step over `parameters` held here: FP32 gradients made and
// unscaled, their norm, Adam's read and write of the FP32 weights and both moments, the
// 16-bit weights written back.
double optimizer_seconds(double parameters, const GpuProfile& gpu);

}  // namespace fabricsim
