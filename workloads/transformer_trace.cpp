#include "workloads/transformer_trace.h"

#include <stdexcept>
#include <vector>

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
  std::vector<TraceOp>& ops;
  int next_id = 0;
  int last_compute = -1;  // keeps the compute chain explicit
  int add(TraceOp op) {
    op.id = next_id++;
    ops.push_back(std::move(op));
    return ops.back().id;
  }
  int compute(double flops, std::vector<int> deps, const std::string& label) {
    TraceOp op;
    op.kind = TraceOpKind::kCompute;
    op.flops = flops;
    op.deps = std::move(deps);
    op.label = label;
    return last_compute = add(std::move(op));
  }
  int collective(CollectiveOp o, std::int64_t bytes, std::vector<int> group, std::string key, std::vector<int> deps,
                 const std::string& label) {
    TraceOp op;
    op.kind = TraceOpKind::kCollective;
    op.op = o;
    op.bytes = bytes;
    op.group = std::move(group);
    op.key = std::move(key);
    op.deps = std::move(deps);
    op.label = label;
    return add(std::move(op));
  }
  int p2p(TraceOpKind kind, int peer, std::int64_t bytes, int tag, std::vector<int> deps) {
    TraceOp op;
    op.kind = kind;
    op.peer = peer;
    op.bytes = bytes;
    op.tag = tag;
    op.deps = std::move(deps);
    op.label = "pp";
    return add(std::move(op));
  }
};

std::vector<int> deps(int a, int b = -1) {
  std::vector<int> d;
  if (a >= 0) d.push_back(a);
  if (b >= 0) d.push_back(b);
  return d;
}

}  // namespace

Trace generate_transformer_trace(const ModelSpec& m, const ParallelSpec& s, const GpuProfile& gpu) {
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
  t.ranks = s.tp * s.pp * s.dp;
  t.achieved_flops = gpu.achieved_tflops * 1e12;
  t.ops.resize(static_cast<std::size_t>(t.ranks));
  const auto is_moe = [&](int layer) { return m.experts > 0 && (layer + 1) % m.moe_every == 0; };
  const std::string fwd = "fwd", bwd = "bwd";

  for (int d = 0; d < s.dp; ++d) {
    for (int p = 0; p < s.pp; ++p) {
      for (int tp = 0; tp < s.tp; ++tp) {
        const int rank = trace_rank(s, d, p, tp);
        RankBuilder b{t.ops[static_cast<std::size_t>(rank)]};
        std::vector<int> tp_group, dp_group, ep_group;
        for (int i = 0; i < s.tp; ++i) tp_group.push_back(trace_rank(s, d, p, i));
        for (int i = 0; i < s.dp; ++i) dp_group.push_back(trace_rank(s, i, p, tp));
        const int ep_block = d / s.ep;
        for (int i = 0; i < s.ep; ++i) ep_group.push_back(trace_rank(s, ep_block * s.ep + i, p, tp));
        const std::string where = "d" + std::to_string(d) + "p" + std::to_string(p);
        // Tensor-parallel AllReduce keys name the data index and stage but not the tensor
        // index: the whole TP group shares them.
        const auto tp_ar = [&](int after, const std::string& what) {
          if (s.tp == 1) return after;
          return b.collective(CollectiveOp::kAllReduce, tp_allreduce_bytes(m), tp_group, "tp/" + where + "/" + what, deps(after), "tp");
        };
        const auto ep_a2a = [&](int after, const std::string& what) {
          if (s.ep == 1) return after;
          return b.collective(CollectiveOp::kAllToAll, ep_alltoall_bytes(m), ep_group,
                              "ep/e" + std::to_string(ep_block) + "p" + std::to_string(p) + "t" + std::to_string(tp) + "/" + what,
                              deps(after), "ep");
        };
        // When the last backward of each layer of this stage finished (for DP buckets).
        std::vector<int> grad_ready(static_cast<std::size_t>(per_stage), -1);

        const auto forward = [&](int mb) {
          int last = -1;
          if (p > 0) last = b.p2p(TraceOpKind::kRecv, trace_rank(s, d, p - 1, tp), pp_activation_bytes(m), 2 * mb, {});
          for (int l = 0; l < per_stage; ++l) {
            const int layer = p * per_stage + l;
            const std::string id = "mb" + std::to_string(mb) + "/l" + std::to_string(layer);
            last = b.compute(attention_forward_flops(m, s), deps(last, b.last_compute), fwd);
            last = tp_ar(last, id + "/fa");
            const bool moe = is_moe(layer);
            if (moe) last = ep_a2a(last, id + "/fd");
            last = b.compute(mlp_forward_flops(m, moe, s), deps(last, b.last_compute), fwd);
            if (moe) last = ep_a2a(last, id + "/fc");
            last = tp_ar(last, id + "/fm");
          }
          if (p == s.pp - 1) last = b.compute(lm_head_forward_flops(m, s), deps(last, b.last_compute), fwd);
          if (p < s.pp - 1) b.p2p(TraceOpKind::kSend, trace_rank(s, d, p + 1, tp), pp_activation_bytes(m), 2 * mb, deps(last));
          return last;
        };
        std::vector<int> forward_done(static_cast<std::size_t>(mb_count), -1);
        const auto backward = [&](int mb) {
          int last = forward_done[static_cast<std::size_t>(mb)];
          if (p < s.pp - 1) {
            const int got = b.p2p(TraceOpKind::kRecv, trace_rank(s, d, p + 1, tp), pp_activation_bytes(m), 2 * mb + 1, {});
            last = b.compute(0, deps(got, last), bwd);  // a join: the gradient arrived and our forward is done
          }
          if (p == s.pp - 1) last = b.compute(2 * lm_head_forward_flops(m, s), deps(last, b.last_compute), bwd);
          for (int l = per_stage - 1; l >= 0; --l) {
            const int layer = p * per_stage + l;
            const std::string id = "mb" + std::to_string(mb) + "/l" + std::to_string(layer);
            const bool moe = is_moe(layer);
            last = tp_ar(last, id + "/bm");
            if (moe) last = ep_a2a(last, id + "/bc");
            last = b.compute(2 * mlp_forward_flops(m, moe, s), deps(last, b.last_compute), bwd);
            if (moe) last = ep_a2a(last, id + "/bd");
            last = tp_ar(last, id + "/ba");
            last = b.compute(2 * attention_forward_flops(m, s), deps(last, b.last_compute), bwd);
            grad_ready[static_cast<std::size_t>(l)] = last;
          }
          if (p > 0) b.p2p(TraceOpKind::kSend, trace_rank(s, d, p - 1, tp), pp_activation_bytes(m), 2 * mb + 1, deps(last));
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
        if (s.dp > 1) {
          int bucket = 0;
          std::int64_t bytes = 0;
          int ready_at = -1;
          const auto flush = [&] {
            if (bytes == 0) return;
            const std::string key = "dp/p" + std::to_string(p) + "t" + std::to_string(tp) + "/b" + std::to_string(bucket++);
            if (s.zero) {
              const int rs = b.collective(CollectiveOp::kReduceScatter, bytes, dp_group, key + "/rs", deps(ready_at), "dp");
              b.collective(CollectiveOp::kAllGather, bytes, dp_group, key + "/ag", deps(rs), "dp");
            } else {
              b.collective(CollectiveOp::kAllReduce, bytes, dp_group, key, deps(ready_at), "dp");
            }
            bytes = 0;
          };
          for (int l = per_stage - 1; l >= 0; --l) {
            bytes += layer_parameters(m, is_moe(p * per_stage + l), s) * m.grad_bytes;
            ready_at = grad_ready[static_cast<std::size_t>(l)];
            if (bytes >= s.bucket_bytes) flush();
          }
          flush();
        }
      }
    }
  }
  return t;
}

}  // namespace fabricsim
