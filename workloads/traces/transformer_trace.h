#pragma once
// Generates training-step traces for decoder-only transformers under Megatron-style
// tensor parallelism, 1F1B pipeline parallelism, bucketed data-parallel gradient
// reduction overlapped with backward, and expert parallelism for MoE layers
// (docs/traces.md gives every formula).
#include <cstdint>
#include <functional>
#include <string>

#include "workloads/traces/gpu_kernels.h"
#include "workloads/traces/trace.h"

namespace fabricsim {

struct ModelSpec {
  std::string name;
  int layers = 2;
  std::int64_t hidden = 1024;
  int heads = 16;
  std::int64_t ffn_hidden = 0;  // 0: 4 x hidden
  std::int64_t seq_len = 2048;
  std::int64_t micro_batch = 1;
  std::int64_t vocab = 32000;
  int dtype_bytes = 2;  // activations and the tensor-parallel reductions
  int grad_bytes = 2;   // gradients as data parallelism reduces them
  int experts = 0;      // MoE: experts per MoE layer (0: dense)
  int top_k = 2;
  int moe_every = 1;    // every k-th layer is MoE

  std::int64_t ffn() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
};

struct ParallelSpec {
  int tp = 1, pp = 1, dp = 1, ep = 1;
  int microbatches = 1;
  std::int64_t bucket_bytes = 25 * 1024 * 1024;
  bool zero = false;  // ReduceScatter + AllGather of gradients instead of AllReduce
  // Full activation recomputation: each layer's forward, its AllReduces too, runs again
  // just before its backward (Megatron-LM's --recompute-granularity full).
  bool recompute = false;
  // Gradients reduced in buckets while the backward runs (PyTorch DDP); otherwise in one
  // AllReduce after it (Megatron-LM's local DDP).
  bool overlap_dp = true;
};


// Rank of (data index d, stage p, tensor index t): TP innermost, then PP, then DP.
constexpr int trace_rank(const ParallelSpec& s, int d, int p, int t) { return (d * s.pp + p) * s.tp + t; }

// Sizes in bytes (nccl-tests meaning) and per-GPU FLOPs, as the generator uses them.
std::int64_t tp_allreduce_bytes(const ModelSpec& m);           // b s h dtype
std::int64_t pp_activation_bytes(const ModelSpec& m);          // b s h dtype
std::int64_t ep_alltoall_bytes(const ModelSpec& m);            // b s h top_k dtype
std::int64_t layer_parameters(const ModelSpec& m, bool moe, const ParallelSpec& s);  // per GPU
double attention_forward_flops(const ModelSpec& m, const ParallelSpec& s);  // per GPU, per micro-batch
double mlp_forward_flops(const ModelSpec& m, bool moe, const ParallelSpec& s);
double lm_head_forward_flops(const ModelSpec& m, const ParallelSpec& s);

// Compute ops carry FLOPs at the profile's constant rate or, where the GPU profile has the
// kernel model, the time of the layer's kernels (transformer_kernels.h), and then the
// optimizer's step ends the step.
// Throws std::invalid_argument for impossible splits (layers not divisible by pp, ep
// not dividing dp, MoE without experts divisible by ep, ...).
// `progress`, when given, hears of each data-parallel replica made (done, of all).
// `rank_made`, when given, is handed the trace as each rank's operations are complete,
// in rank order (a ReplayProgram takes them from there; the generator never reads a
// rank's operations again, only the trace's tables).
Trace generate_transformer_trace(const ModelSpec& model, const ParallelSpec& par, const GpuProfile& gpu,
                                 const std::function<void(std::uint32_t done, std::uint32_t total)>& progress = {},
                                 const std::function<void(Trace&)>& rank_made = {});

}  // namespace fabricsim
