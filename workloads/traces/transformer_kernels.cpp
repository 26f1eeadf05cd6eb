#include "workloads/traces/transformer_kernels.h"

#include "workloads/traces/transformer_trace.h"

namespace fabricsim {

namespace {

// A forward GEMM (m, n, k) and its two backward GEMMs: the input's gradient (m x k over
// n) and the weight's (k x n over m).
struct Gemm {
  double m, n, k, batch = 1;
};

double forward(const GpuProfile& g, const Gemm& x, int bytes) { return gemm_seconds(g, x.m, x.n, x.k, x.batch, bytes); }
double backward(const GpuProfile& g, const Gemm& x, int bytes) {
  return gemm_seconds(g, x.m, x.k, x.n, x.batch, bytes) + gemm_seconds(g, x.k, x.n, x.m, x.batch, bytes);
}

}  // namespace

LayerKernelSeconds transformer_kernel_seconds(const ModelSpec& m, const ParallelSpec& s, const GpuProfile& g) {
  const int e = m.dtype_bytes;
  const double b = static_cast<double>(m.micro_batch), seq = static_cast<double>(m.seq_len), h = static_cast<double>(m.hidden);
  const double t = s.tp, heads = m.heads / s.tp, head_dim = h / m.heads, f = static_cast<double>(m.ffn()) / t;
  const double tokens = b * seq;
  // Elements each kind of element-wise kernel touches: the hidden state (whole on every
  // rank), the MLP's inner activations and the attention scores (this rank's heads).
  const double hidden = tokens * h, inner = tokens * f, scores = b * heads * seq * seq;
  const Gemm qkv{tokens, 3 * h / t, h}, score{seq, seq, head_dim, b * heads}, context{seq, head_dim, seq, b * heads},
      projection{tokens, h, h / t}, fc1{tokens, f, h}, fc2{tokens, h, f};
  const auto mem = [&](double bytes) { return memory_seconds(g, bytes); };
  LayerKernelSeconds k;
  // Bytes per element, 16-bit activations and 1-byte dropout masks: a layer norm reads and
  // writes (4); softmax reads scores, writes probabilities (4); dropout reads, writes and
  // writes its mask (5); bias-dropout-add reads two, writes one and the mask (7);
  // bias-GeLU reads and writes (4).
  k.attention_forward = mem(2.0 * e * hidden) + forward(g, qkv, e) + forward(g, score, e) + mem(2.0 * e * scores) +
                        mem((2.0 * e + 1) * scores) + forward(g, context, e) + forward(g, projection, e);
  k.mlp_forward = mem((3.0 * e + 1) * hidden) + mem(2.0 * e * hidden) + forward(g, fc1, e) + mem(2.0 * e * inner) + forward(g, fc2, e) +
                  mem((3.0 * e + 1) * hidden);
  // Backward: a layer norm reads its input and the gradient twice (weight gradients, then
  // the input's) and writes one (5 e); softmax reads probabilities and gradient, writes one
  // (3 e); dropout reads gradient and mask, writes one (2 e + 1); bias-dropout-add the
  // same plus the bias gradient's read (3 e + 1); bias-GeLU reads input and gradient,
  // writes one, and reads it for the bias gradient (4 e); QKV's bias gradient reads its
  // output gradient.
  k.attention_backward = backward(g, projection, e) + backward(g, context, e) + mem((2.0 * e + 1) * scores) + mem(3.0 * e * scores) +
                         backward(g, score, e) + backward(g, qkv, e) + mem(e * tokens * 3 * h / t) + mem(5.0 * e * hidden);
  k.mlp_backward = mem((3.0 * e + 1) * hidden) + backward(g, fc2, e) + mem(4.0 * e * inner) + backward(g, fc1, e) + mem(5.0 * e * hidden) +
                   mem((3.0 * e + 1) * hidden);
  // The head: logits over this rank's share of the vocabulary; the cross entropy in FP32
  // casts them (e + 4), takes the maximum (4), subtracts it (8), exponentiates (8), sums
  // (4) and normalizes (8); its backward scales the saved softmax (8) and casts it back
  // (4 + e).
  const double vocab = static_cast<double>(m.vocab) / t, logits = tokens * vocab;
  const Gemm head{tokens, vocab, h};
  k.head_forward = forward(g, head, e) + mem((e + 36.0) * logits);
  k.head_backward = mem((12.0 + e) * logits) + backward(g, head, e);
  return k;
}

double optimizer_seconds(double parameters, const GpuProfile& g) {
  // Bytes per parameter: FP32 gradients from 16-bit ones (6), unscaled (8), their norm
  // (4), Adam (16 read, 12 written), 16-bit weights from FP32 (6), gradients zeroed (2).
  return memory_seconds(g, 54.0 * parameters);
}

}  // namespace fabricsim
