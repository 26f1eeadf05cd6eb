// The kernel model of compute (workloads/traces/gpu_kernels.h, transformer_kernels.h):
// a GEMM's waves of tiles and its memory roofline worked by hand; one Megatron-LM layer
// against its published single-node time; the step a trace generator builds on it
// (recomputation, gradients reduced after the backward, the optimizer's step) counted by
// hand and replayed on an ideal network.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include "app/config/config_error.h"
#include "app/config/config_loader.h"
#include "app/config/model_files.h"
#include "app/scenario/scenario.h"
#include "test_support.h"
#include "workloads/traces/gpu_kernels.h"
#include "workloads/traces/trace.h"
#include "workloads/traces/transformer_kernels.h"
#include "workloads/traces/transformer_trace.h"

using namespace fabricsim;

namespace {

// configs/gpus/a100.yaml's figures.
GpuProfile a100() {
  GpuProfile g;
  g.name = "a100";
  g.matmul_tflops = 252;
  g.memory_gbps = 1733;
  g.sms = 108;
  return g;
}

}  // namespace

TEST_CASE("a GEMM takes whole waves of tiles at the largest GEMM's rate, or its bytes at the memory's") {
  const GpuProfile g = a100();
  // 256 x 13824 x 4096: 1 x 108 tiles of 256 x 128, one per SM, one wave. A tile is
  // 2 * 256 * 128 * 4096 = 268435456 FLOPs at 252e12 / 108 = 2.3333e12 FLOP/s per SM:
  // 115.043 us. Its bytes, (256*4096 + 4096*13824 + 256*13824) * 2 = 122421248, take
  // 70.64 us at 1733 GB/s: the compute sets it.
  CHECK(gemm_seconds(g, 256, 13824, 4096) == doctest::Approx(268435456.0 / (252e12 / 108)).epsilon(1e-12));
  // One row more: 2 x 108 tiles one way, 3 x 54 = 162 the other; 162 tiles are two
  // waves, so 0.4% more work takes twice as long.
  CHECK(gemm_seconds(g, 257, 13824, 4096) == doctest::Approx(2 * 268435456.0 / (252e12 / 108)).epsilon(1e-12));
  // Attention scores of 256 heads: 2048 x 2048 over 96 each. Their 256 * (2048*96 +
  // 96*2048 + 2048*2048) * 2 = 2348810240 bytes take 1.355343 ms at 1733 GB/s, more than
  // the 304 waves of 6291456-FLOP tiles (0.820 ms): the memory sets it.
  CHECK(gemm_seconds(g, 2048, 2048, 96, 256) == doctest::Approx(2348810240.0 / 1733e9).epsilon(1e-12));
  CHECK(memory_seconds(g, 1733e9) == doctest::Approx(1.0));
}

TEST_CASE("one layer of a 22B GPT on one DGX A100 takes its published time, and recomputed, its published time too") {
  // Korthikanti et al. (MLSys'23, arXiv 2205.05198), Tables 3 and 4: hidden 6144, 64 heads,
  // sequence 2048, micro-batch 4, tensor parallelism 8 on one DGX A100; forward 7.7 ms and
  // backward 11.9 ms (19.6 ms), 27.2 ms with the forward recomputed. Each of the layer's
  // four AllReduces of 4 * 2048 * 6144 * 2 bytes over the node's 8 GPUs takes 0.7588 ms
  // as fabricsim simulates it (`collective` on a dgx_a100 node). a100.yaml's GEMM rate is
  // fitted to the 19.6 ms; the 27.2 ms is what the fit predicts.
  ModelSpec m;
  m.layers = 48;
  m.hidden = 6144;
  m.heads = 64;
  m.seq_len = 2048;
  m.micro_batch = 4;
  m.vocab = 51200;
  ParallelSpec par;
  par.tp = 8;
  const LayerKernelSeconds k = transformer_kernel_seconds(m, par, a100());
  const double all_reduce = 0.7588e-3;
  const double forward = k.attention_forward + k.mlp_forward + 2 * all_reduce;
  const double backward = k.attention_backward + k.mlp_backward + 2 * all_reduce;
  CHECK(forward + backward == doctest::Approx(19.6e-3).epsilon(0.01));
  CHECK(2 * forward + backward == doctest::Approx(27.2e-3).epsilon(0.03));
  // The backward's GEMMs do twice the forward's work: it takes longer, within the
  // published split's 7.7 / 11.9 by 10%.
  CHECK(forward == doctest::Approx(7.7e-3).epsilon(0.10));
  CHECK(backward == doctest::Approx(11.9e-3).epsilon(0.10));
}

TEST_CASE("a step on the kernel model: recomputed forwards, one gradient AllReduce after the backward, then the optimizer") {
  ModelSpec m;
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 16;
  m.seq_len = 512;
  m.micro_batch = 2;
  m.vocab = 1000;
  ParallelSpec par;
  par.tp = 2;
  par.dp = 2;
  par.microbatches = 2;
  par.recompute = true;
  par.overlap_dp = false;
  const GpuProfile g = a100();
  const Trace t = generate_transformer_trace(m, par, g);
  CHECK(t.achieved_flops == 0);
  // It says which model made its times, and its file keeps that.
  CHECK(t.compute_description() == "kernels of GPU a100: GEMMs at 252 TFLOP/s in 256 x 128 tiles on 108 SMs, memory at 1733 GB/s");
  CHECK(parse_trace(trace_to_jsonl(t), "t.jsonl").compute_description() == t.compute_description());
  CHECK(generate_transformer_trace(m, par, GpuProfile{"h100", 400}).compute_description() == "FLOPs of GPU h100 at 400 TFLOP/s");
  const LayerKernelSeconds k = transformer_kernel_seconds(m, par, g);
  const auto ps = [](double seconds) { return static_cast<Time>(std::llround(seconds * 1e12)); };
  // Per rank and micro-batch: 4 layers of (attention, MLP) forward, again before the
  // backward, and backward (24 computes), the head forward and backward (2); the
  // optimizer once: 2 * 26 + 1 = 53. TP AllReduces: 4 layers * (2 forward + 2 again + 2
  // backward) * 2 micro-batches = 48. DP: one AllReduce of all 4 layers' gradients,
  // 4 * (4 * 1024^2 + 2 * 1024 * 4096) / 2 weights of 2 bytes = 50331648.
  for (int r = 0; r < t.ranks; ++r) {
    int computes = 0, tp = 0, dp = 0;
    Time busy = 0;
    const TraceOp* optimizer = nullptr;
    const TraceOp* dp_reduce = nullptr;
    for (const TraceOp& op : t.ops[static_cast<std::size_t>(r)]) {
      if (op.kind == TraceOpKind::kCompute) {
        ++computes;
        busy += t.compute_time(op);
        optimizer = &op;
      } else if (op.kind == TraceOpKind::kCollective) {
        if (t.group(op).size() == 2 && t.group(op)[1] - t.group(op)[0] == 1) {
          ++tp;
        } else {
          ++dp;
          dp_reduce = &op;
        }
      }
    }
    CHECK(computes == 53);
    CHECK(tp == 48);
    REQUIRE(dp == 1);
    CHECK(dp_reduce->bytes == 50331648);
    // The optimizer's step comes last and waits for the gradients: 54 bytes per weight
    // held here, 4 layers of (4 * 1024^2 + 2 * 1024 * 4096) / 2 = 6291456 and the
    // embedding's 1000 * 1024 / 2, 25677824 in all.
    REQUIRE(optimizer != nullptr);
    CHECK(optimizer->duration == ps(54.0 * 25677824 / 1733e9));
    bool waits = false;
    for (int d : t.deps(r, *optimizer)) waits = waits || d == dp_reduce->id;
    CHECK(waits);
    // Every compute op's time, added by hand from the layer's parts.
    const Time layer = 2 * ps(k.attention_forward) + 2 * ps(k.mlp_forward) + ps(k.attention_backward) + ps(k.mlp_backward);
    CHECK(busy == 2 * (4 * layer + ps(k.head_forward) + ps(k.head_backward)) + optimizer->duration);
  }
}

TEST_CASE("a GPU file's kernel model is read, and a missing figure is refused at its key") {
  const auto dir = test_temp_path("fabricsim_gpu_kernels");
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "good.yaml").string();
  std::ofstream(good) << "name: a100\npeak_tflops: 312\nkernels: {matmul_tflops: 252, memory_gbps: 1733, sms: 108}\n";
  const GpuProfile g = load_gpu_profile(good);
  CHECK(g.kernel_model());
  CHECK(g.matmul_tflops == 252);
  CHECK(g.memory_gbps == 1733);
  CHECK(g.sms == 108);
  CHECK(g.tile_m == 256);
  const std::string bad = (dir / "bad.yaml").string();
  std::ofstream(bad) << "name: a100\nkernels: {matmul_tflops: 252, sms: 108}\n";
  try {
    (void)load_gpu_profile(bad);
    FAIL("a kernel model without memory_gbps was accepted");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.find("memory_gbps") != std::string::npos);
    CHECK(what.find("bad.yaml") != std::string::npos);
  }
}
