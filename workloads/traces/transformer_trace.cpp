#include "workloads/traces/transformer_trace.h"

#include <cmath>
#include <cstdio>
#include <span>
#include <stdexcept>
#include <vector>

#include "workloads/traces/transformer_kernels.h"

namespace fabricsim {

std::int64_t tp_allreduce_bytes(const ModelSpec& m) { return m.micro_batch * m.seq_len * m.hidden * m.dtype_bytes; }
std::int64_t pp_activation_bytes(const ModelSpec& m) { return m.micro_batch * m.seq_len * m.hidden * m.dtype_bytes; }
std::int64_t ep_alltoall_bytes(const ModelSpec& m) { return m.micro_batch * m.seq_len * m.hidden * m.top_k * m.dtype_bytes; }

std::int64_t layer_parameters(const ModelSpec& m, bool moe, const ParallelSpec& s) {
  // Attention: Q, K, V and output projections, 4 h^2; MLP: two h x f matrices, one per
  // expert held here (experts / ep of them) for MoE. Split over tensor parallelism.
  const std::int64_t attention = 4 * m.hidden * m.hidden;
  const std::int64_t mlp = 2 * m.hidden * m.ffn() * (moe ? m.experts / s.ep : 1);
  return (attention + mlp) / s.tp;
}

double attention_forward_flops(const ModelSpec& m, const ParallelSpec& s) {
  const double b = static_cast<double>(m.micro_batch), sq = static_cast<double>(m.seq_len), h = static_cast<double>(m.hidden);
  // 2 FLOPs per multiply-add: projections 2 b s 4h^2, scores and weighted sum 4 b s^2 h.
  return (2 * b * sq * 4 * h * h + 4 * b * sq * sq * h) / s.tp;
}

double mlp_forward_flops(const ModelSpec& m, bool moe, const ParallelSpec& s) {
  const double b = static_cast<double>(m.micro_batch), sq = static_cast<double>(m.seq_len), h = static_cast<double>(m.hidden);
  // Each token through one MLP (dense) or top_k experts (MoE, balanced routing).
  return 2 * b * sq * 2 * h * static_cast<double>(m.ffn()) * (moe ? m.top_k : 1) / s.tp;
}

double lm_head_forward_flops(const ModelSpec& m, const ParallelSpec& s) {
  return 2.0 * static_cast<double>(m.micro_batch * m.seq_len * m.hidden) * static_cast<double>(m.vocab) / s.tp;
}

namespace {

struct RankBuilder {
  Trace& t;
  int rank;
  int next_id = 0;
  int last_compute = -1;  // keeps the compute chain explicit
  int add(TraceOp op, std::span<const int> deps) {
    op.id = next_id++;
    t.add(rank, op, deps);
    return op.id;
  }
  int compute(double flops, std::span<const int> deps, std::uint16_t label) {
    TraceOp op;
    op.kind = TraceOpKind::kCompute;
    op.flops = flops;
    op.label = label;
    return last_compute = add(op, deps);
  }
  int compute_for(double seconds, std::span<const int> deps, std::uint16_t label) {
    TraceOp op;
    op.kind = TraceOpKind::kCompute;
    op.duration = static_cast<Time>(std::llround(seconds * 1e12));
    op.label = label;
    return last_compute = add(op, deps);
  }
  int collective(CollectiveOp o, std::int64_t bytes, std::uint32_t group, std::uint32_t key, std::span<const int> deps,
                 std::uint16_t label) {
    TraceOp op;
    op.kind = TraceOpKind::kCollective;
    op.op = o;
    op.bytes = bytes;
    op.group = group;
    op.key = key;
    op.label = label;
    return add(op, deps);
  }
  int p2p(TraceOpKind kind, int peer, std::int64_t bytes, int tag, std::span<const int> deps, std::uint16_t label) {
    TraceOp op;
    op.kind = kind;
    op.peer = peer;
    op.bytes = bytes;
    op.tag = tag;
    op.label = label;
    return add(op, deps);
  }
};

// One or two dependencies (-1: none), without a heap allocation per operation (tens of
// millions of them at cluster scale). Lives to the end of the call it is passed to.
struct Deps {
  int ids[2] = {-1, -1};
  std::size_t n = 0;
  operator std::span<const int>() const { return {ids, n}; }
};
Deps deps(int a, int b = -1) {
  Deps d;
  if (a >= 0) d.ids[d.n++] = a;
  if (b >= 0) d.ids[d.n++] = b;
  return d;
}

}  // namespace

Trace generate_transformer_trace(const ModelSpec& m, const ParallelSpec& s, const GpuProfile& gpu,
                                 const std::function<void(std::uint32_t done, std::uint32_t total)>& progress,
                                 const std::function<void(Trace&)>& rank_made) {
  if (s.tp < 1 || s.pp < 1 || s.dp < 1 || s.ep < 1 || s.microbatches < 1) throw std::invalid_argument("parallel sizes must be at least 1");
  if (m.heads % s.tp != 0) {
    throw std::invalid_argument("tp (" + std::to_string(s.tp) + ") must divide the model's attention heads (" + std::to_string(m.heads) + ")");
  }
  if (m.layers % s.pp != 0) throw std::invalid_argument("layers (" + std::to_string(m.layers) + ") must divide evenly over pp (" + std::to_string(s.pp) + ")");
  if (s.dp % s.ep != 0) throw std::invalid_argument("ep (" + std::to_string(s.ep) + ") must divide dp (" + std::to_string(s.dp) + ")");
  if (s.ep > 1 && (m.experts == 0 || m.experts % s.ep != 0)) throw std::invalid_argument("ep > 1 needs MoE experts divisible by ep");
  const int per_stage = m.layers / s.pp;
  const int mb_count = s.microbatches;
  Trace t;
  t.set_ranks(s.tp * s.pp * s.dp);
  const bool kernels = gpu.kernel_model();
  t.achieved_flops = kernels ? 0 : gpu.achieved_tflops * 1e12;
  const LayerKernelSeconds times = kernels ? transformer_kernel_seconds(m, s, gpu) : LayerKernelSeconds{};
  char model[192];
  if (kernels) {
    std::snprintf(model, sizeof model, "kernels of GPU %s: GEMMs at %.6g TFLOP/s in %d x %d tiles on %d SMs, memory at %.6g GB/s",
                  gpu.name.c_str(), gpu.matmul_tflops, gpu.tile_m, gpu.tile_n, gpu.sms, gpu.memory_gbps);
  } else {
    std::snprintf(model, sizeof model, "FLOPs of GPU %s at %.6g TFLOP/s", gpu.name.c_str(), gpu.achieved_tflops);
  }
  t.compute_model = model;
  const auto is_moe = [&](int layer) { return m.experts > 0 && (layer + 1) % m.moe_every == 0; };
  const std::uint16_t fwd = t.name_id("fwd"), bwd = t.name_id("bwd"), tp_label = t.name_id("tp"), pp_label = t.name_id("pp"),
                      dp_label = t.name_id("dp"), ep_label = t.name_id("ep"), step_label = kernels ? t.name_id("optimizer") : 0;
  // Tensor-parallel keys: the first member of a TP group makes them, the others take them
  // in the same order (every member issues the same TP collectives), so the millions of
  // them at cluster scale are neither formatted nor looked up eight times.
  std::vector<std::uint32_t> tp_keys;
  std::size_t last_ops = 0, last_deps = 0;
  std::vector<std::uint32_t> dp_ids(static_cast<std::size_t>(s.pp * s.tp), 0);

  for (int d = 0; d < s.dp; ++d) {
    for (int p = 0; p < s.pp; ++p) {
      for (int tp = 0; tp < s.tp; ++tp) {
        const int rank = trace_rank(s, d, p, tp);
        RankBuilder b{t, rank};
        // Ranks of a stage have as many ops as the last one built: no spare room (and at a
        // stage's first rank, what is spare is given back below).
        t.ops[static_cast<std::size_t>(rank)].reserve(last_ops);
        t.dep_lists[static_cast<std::size_t>(rank)].reserve(last_deps);
        t.dep_at[static_cast<std::size_t>(rank)].reserve(last_ops + 1);
        if (tp == 0) tp_keys.clear();
        std::size_t tp_next = 0;
        std::vector<int> tp_group, ep_group;
        for (int i = 0; i < s.tp; ++i) tp_group.push_back(trace_rank(s, d, p, i));
        const int ep_block = d / s.ep;
        for (int i = 0; i < s.ep; ++i) ep_group.push_back(trace_rank(s, ep_block * s.ep + i, p, tp));
        const std::uint32_t tp_id = t.group_id(tp_group);
        // A DP group is the same for every data index: listed and looked up once per
        // (stage, tensor rank), not once per rank (1,562 members each at 100,000 GPUs).
        std::uint32_t& dp_id = dp_ids[static_cast<std::size_t>(p * s.tp + tp)];
        if (d == 0) {
          std::vector<int> dp_group;
          for (int i = 0; i < s.dp; ++i) dp_group.push_back(trace_rank(s, i, p, tp));
          dp_id = t.group_id(dp_group);
        }
        const std::uint32_t ep_id = t.group_id(ep_group);
        const std::string where = "d" + std::to_string(d) + "p" + std::to_string(p);
        // Tensor-parallel AllReduce keys name the data index and stage but not the tensor
        // index: the whole TP group shares them.
        // "mbM/lL/what": a collective's place in the step, for its key.
        const auto place = [](int mb, int layer, const char* what) {
          return "mb" + std::to_string(mb) + "/l" + std::to_string(layer) + "/" + what;
        };
        const auto tp_ar = [&](int after, int mb, int layer, const char* what) {
          if (s.tp == 1) return after;
          if (tp == 0) tp_keys.push_back(t.new_key("tp/" + where + "/" + place(mb, layer, what)));
          return b.collective(CollectiveOp::kAllReduce, tp_allreduce_bytes(m), tp_id, tp_keys.at(tp_next++), deps(after), tp_label);
        };
        const auto ep_a2a = [&](int after, int mb, int layer, const char* what) {
          if (s.ep == 1) return after;
          return b.collective(CollectiveOp::kAllToAll, ep_alltoall_bytes(m), ep_id,
                              t.key_id("ep/e" + std::to_string(ep_block) + "p" + std::to_string(p) + "t" + std::to_string(tp) + "/" + place(mb, layer, what)),
                              deps(after), ep_label);
        };
        // When the last backward of each layer of this stage finished (for DP buckets).
        std::vector<int> grad_ready(static_cast<std::size_t>(per_stage), -1);
        // A block of compute: its FLOPs, or its kernels' time.
        const auto work = [&](double flops, double seconds, int after, std::uint16_t label) {
          return kernels ? b.compute_for(seconds, deps(after, b.last_compute), label) : b.compute(flops, deps(after, b.last_compute), label);
        };
        // One layer's forward: attention, its AllReduce, the MLP, its AllReduce. `again`:
        // recomputed before the backward (its AllReduces have keys of their own).
        const auto layer_forward = [&](int last, int mb, int layer, bool again) {
          last = work(attention_forward_flops(m, s), times.attention_forward, last, fwd);
          last = tp_ar(last, mb, layer, again ? "ra" : "fa");
          const bool moe = is_moe(layer);
          if (moe) last = ep_a2a(last, mb, layer, again ? "rd" : "fd");
          last = work(mlp_forward_flops(m, moe, s), times.mlp_forward, last, fwd);
          if (moe) last = ep_a2a(last, mb, layer, again ? "rc" : "fc");
          return tp_ar(last, mb, layer, again ? "rm" : "fm");
        };

        const auto forward = [&](int mb) {
          int last = -1;
          if (p > 0) last = b.p2p(TraceOpKind::kRecv, trace_rank(s, d, p - 1, tp), pp_activation_bytes(m), 2 * mb, {}, pp_label);
          for (int l = 0; l < per_stage; ++l) last = layer_forward(last, mb, p * per_stage + l, false);
          if (p == s.pp - 1) last = work(lm_head_forward_flops(m, s), times.head_forward, last, fwd);
          if (p < s.pp - 1) b.p2p(TraceOpKind::kSend, trace_rank(s, d, p + 1, tp), pp_activation_bytes(m), 2 * mb, deps(last), pp_label);
          return last;
        };
        std::vector<int> forward_done(static_cast<std::size_t>(mb_count), -1);
        const auto backward = [&](int mb) {
          int last = forward_done[static_cast<std::size_t>(mb)];
          if (p < s.pp - 1) {
            const int got = b.p2p(TraceOpKind::kRecv, trace_rank(s, d, p + 1, tp), pp_activation_bytes(m), 2 * mb + 1, {}, pp_label);
            last = b.compute(0, deps(got, last), bwd);  // a join: the gradient arrived and our forward is done
          }
          if (p == s.pp - 1) last = work(2 * lm_head_forward_flops(m, s), times.head_backward, last, bwd);
          for (int l = per_stage - 1; l >= 0; --l) {
            const int layer = p * per_stage + l;
            const bool moe = is_moe(layer);
            if (s.recompute) last = layer_forward(last, mb, layer, true);
            last = tp_ar(last, mb, layer, "bm");
            if (moe) last = ep_a2a(last, mb, layer, "bc");
            last = work(2 * mlp_forward_flops(m, moe, s), times.mlp_backward, last, bwd);
            if (moe) last = ep_a2a(last, mb, layer, "bd");
            last = tp_ar(last, mb, layer, "ba");
            last = work(2 * attention_forward_flops(m, s), times.attention_backward, last, bwd);
            grad_ready[static_cast<std::size_t>(l)] = last;
          }
          if (p > 0) b.p2p(TraceOpKind::kSend, trace_rank(s, d, p - 1, tp), pp_activation_bytes(m), 2 * mb + 1, deps(last), pp_label);
        };
        // 1F1B: warm-up forwards, then one forward and one backward in turn, then the
        // remaining backwards.
        const int warmup = std::min(s.pp - p - 1, mb_count);
        int f = 0, bk = 0;
        for (; f < warmup; ++f) forward_done[static_cast<std::size_t>(f)] = forward(f);
        while (f < mb_count) {
          forward_done[static_cast<std::size_t>(f)] = forward(f);
          ++f;
          backward(bk++);
        }
        while (bk < mb_count) backward(bk++);
        // Data parallelism: gradients in buckets, last layers first, each reduced once
        // the final micro-batch's backward has produced all of the bucket's layers.
        std::vector<int> reduced;  // the gradients' collectives, which the optimizer waits for
        if (s.dp > 1) {
          int bucket = 0;
          std::int64_t bytes = 0;
          int ready_at = -1;
          const auto flush = [&] {
            if (bytes == 0) return;
            const std::string key = "dp/p" + std::to_string(p) + "t" + std::to_string(tp) + "/b" + std::to_string(bucket++);
            if (s.zero) {
              const int rs = b.collective(CollectiveOp::kReduceScatter, bytes, dp_id, t.key_id(key + "/rs"), deps(ready_at), dp_label);
              reduced.push_back(b.collective(CollectiveOp::kAllGather, bytes, dp_id, t.key_id(key + "/ag"), deps(rs), dp_label));
            } else {
              reduced.push_back(b.collective(CollectiveOp::kAllReduce, bytes, dp_id, t.key_id(key), deps(ready_at), dp_label));
            }
            bytes = 0;
          };
          for (int l = per_stage - 1; l >= 0; --l) {
            bytes += layer_parameters(m, is_moe(p * per_stage + l), s) * m.grad_bytes;
            // Without overlap, all of them once the whole backward is done.
            ready_at = s.overlap_dp ? grad_ready[static_cast<std::size_t>(l)] : b.last_compute;
            if (s.overlap_dp && bytes >= s.bucket_bytes) flush();
          }
          flush();
        }
        if (kernels) {
          // The optimizer's step over this rank's weights: its layers', and the (tied)
          // embedding's where it is used, on the first and last stages.
          double parameters = 0;
          for (int l = 0; l < per_stage; ++l) parameters += static_cast<double>(layer_parameters(m, is_moe(p * per_stage + l), s));
          if (p == 0 || p == s.pp - 1) parameters += static_cast<double>(m.vocab * m.hidden) / s.tp;
          if (b.last_compute >= 0) reduced.push_back(b.last_compute);
          b.compute_for(optimizer_seconds(parameters, gpu), reduced, step_label);
        }
        t.ops[static_cast<std::size_t>(rank)].shrink_to_fit();
        t.dep_lists[static_cast<std::size_t>(rank)].shrink_to_fit();
        t.dep_at[static_cast<std::size_t>(rank)].shrink_to_fit();
        last_ops = t.ops[static_cast<std::size_t>(rank)].size();
        last_deps = t.dep_lists[static_cast<std::size_t>(rank)].size();
        if (rank_made) rank_made(t);
      }
    }
    if (progress) progress(static_cast<std::uint32_t>(d + 1), static_cast<std::uint32_t>(s.dp));
  }
  t.drop_indexes();
  return t;
}

}  // namespace fabricsim
