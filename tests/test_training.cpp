// Training-step traces: generated against hand-worked FLOPs and sizes, replayed against
// the critical path and the 1F1B bubble, and the overlap of gradient reduction.
#include <doctest/doctest.h>

#include <map>

#include "app/config/config_loader.h"
#include "app/scenario.h"
#include "app/output/training_report.h"
#include "test_support.h"
#include "workloads/chakra/chakra_import.h"
#include "workloads/trace.h"
#include "workloads/transformer_trace.h"

using namespace fabricsim;

namespace {

ModelSpec small_model() {
  ModelSpec m;
  m.name = "small";
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 16;
  m.seq_len = 512;
  m.micro_batch = 1;
  m.vocab = 1000;
  return m;
}

// Runs `trace` on a one-switch fabric of `ranks` hosts at `gbps`, or an ideal network.
struct Replayed {
  Time iteration;
  std::vector<RankBreakdown> ranks;
};
Replayed replay(const Trace& trace, bool ideal, int gbps = 400) {
  const std::string path = "/tmp/fabricsim_test_trace_" + std::to_string(trace.ranks) + (ideal ? "i" : "p") + std::to_string(gbps) + ".jsonl";
  write_trace(trace, path);
  const std::string yaml = "topology:\n  kind: leaf_spine\n  leaves: 1\n  spines: 1\n  hosts_per_leaf: " + std::to_string(trace.ranks) +
                           "\n  host_link: {bandwidth: " + std::to_string(gbps) + "Gbps, latency: 500ns}\n  fabric_link: {bandwidth: 100Gbps}\n"
                           "network:\n  mtu: 64KiB\n  buffer: {size: 64MiB}\n  pfc: {}\nworkload: {kind: trace, file: " + path +
                           ", network: " + (ideal ? "ideal" : "packet") + "}\n";
  ScenarioRun run(load_config_text(yaml, "trace"));
  run.run();
  REQUIRE(run.replay());
  REQUIRE(run.replay()->done());
  return {run.replay()->iteration_time(), run.replay()->breakdown()};
}

}  // namespace

TEST_CASE("with an infinitely fast network, iteration time is the compute critical path") {
  // b=1, s=512, h=1024, f=4h=4096, V=1000, tp=2, pp=1, dp=2, 2 micro-batches, 100 TFLOP/s.
  // Per layer and micro-batch, forward, per GPU:
  //   attention (2*512*4*1024^2 + 4*512^2*1024) / 2 = (4294967296 + 1073741824) / 2 = 2684354560
  //   MLP        2*512*2*1024*4096 / 2                                               = 4294967296
  //   LM head    2*512*1024*1000 / 2                                                 =  524288000
  // Forward = 4 layers * (2684354560 + 4294967296) + 524288000 = 28441575424; backward is
  // twice that; one micro-batch 85324726272; two 170649452544 FLOPs: at 1e14 FLOP/s,
  // 1706494.52544 ns. With one stage and every exchange instant, each GPU computes
  // without a gap, so that is the iteration.
  ModelSpec m = small_model();
  ParallelSpec par;
  par.tp = 2;
  par.dp = 2;
  par.microbatches = 2;
  GpuProfile gpu{"test", 100};
  const Trace t = generate_transformer_trace(m, par, gpu);
  CHECK(attention_forward_flops(m, par) == 2684354560.0);
  CHECK(mlp_forward_flops(m, false, par) == 4294967296.0);
  CHECK(lm_head_forward_flops(m, par) == 524288000.0);
  const Replayed r = replay(t, true);
  // Each compute op is rounded to the picosecond: allow a picosecond per op.
  CHECK(std::abs(static_cast<double>(r.iteration) - 1706494525.44) <= static_cast<double>(t.ops[0].size()));
  for (const RankBreakdown& b : r.ranks) CHECK(b.exposed == 0);
}

TEST_CASE("the 1F1B pipeline bubble is (p-1)/(m+p-1)") {
  for (const auto& [p, mb] : {std::pair{4, 8}, std::pair{2, 6}}) {
    CAPTURE(p);
    CAPTURE(mb);
    ModelSpec m = small_model();
    m.layers = 8;
    m.vocab = 1;  // a negligible LM head keeps the stages equal
    ParallelSpec par;
    par.pp = p;
    par.microbatches = mb;
    const Trace t = generate_transformer_trace(m, par, GpuProfile{"test", 100});
    const Replayed r = replay(t, true);
    const double expected = static_cast<double>(p - 1) / (mb + p - 1);
    for (int stage = 0; stage < p; ++stage) {
      const double idle = 1.0 - static_cast<double>(r.ranks[static_cast<std::size_t>(stage)].compute) / static_cast<double>(r.iteration);
      CHECK(idle == within(expected, 0.01));
    }
    MESSAGE("p=" << p << " m=" << mb << ": stage 0 idle " << 1.0 - static_cast<double>(r.ranks[0].compute) / static_cast<double>(r.iteration)
                 << ", (p-1)/(m+p-1) = " << expected);
  }
}

TEST_CASE("generated collective sizes follow the formulas") {
  // b=1, s=512, h=1024, 2-byte activations: TP AllReduce and PP activations b*s*h*2 =
  // 1048576 B; MoE AllToAll b*s*h*top_k*2 = 2097152 B; per-GPU layer parameters
  // (4h^2 + 2hf * experts/ep) / tp = (4194304 + 8388608*4/2) / 2 = 10485760, gradients
  // 2 bytes each.
  ModelSpec m = small_model();
  m.experts = 4;
  m.top_k = 2;
  ParallelSpec par;
  par.tp = 2;
  par.pp = 2;
  par.dp = 2;
  par.ep = 2;
  par.microbatches = 3;
  par.bucket_bytes = 1;  // one bucket per layer
  CHECK(tp_allreduce_bytes(m) == 1048576);
  CHECK(pp_activation_bytes(m) == 1048576);
  CHECK(ep_alltoall_bytes(m) == 2097152);
  CHECK(layer_parameters(m, true, par) == 10485760);
  const Trace t = generate_transformer_trace(m, par, GpuProfile{"test", 100});
  CHECK(t.ranks == 8);  // tp 2 x pp 2 x dp 2; expert parallelism splits the data-parallel ranks
  std::map<std::string, int> count;
  for (const TraceOp& op : t.ops[0]) {  // rank 0: d0, stage 0, t0
    if (op.kind == TraceOpKind::kCollective) {
      ++count[op.label];
      if (op.label == "tp") CHECK(op.bytes == 1048576);
      if (op.label == "ep") CHECK(op.bytes == 2097152);
      if (op.label == "dp") CHECK(op.bytes == 10485760 * 2);
      if (op.label == "tp") CHECK(op.group == std::vector<int>{0, 1});
      if (op.label == "dp") CHECK(op.group == std::vector<int>{0, 4});
    }
    if (op.kind == TraceOpKind::kSend || op.kind == TraceOpKind::kRecv) CHECK(op.bytes == 1048576);
  }
  // Per micro-batch and layer: 2 TP AllReduces forward, 2 backward; 2 AllToAlls each way.
  CHECK(count["tp"] == 4 * 2 * 3);  // 2 layers per stage, 3 micro-batches
  CHECK(count["ep"] == 4 * 2 * 3);
  CHECK(count["dp"] == 2);          // one bucket per layer of the stage
  CHECK(check_trace(t).empty());
}

TEST_CASE("gradient AllReduce hides behind backward on a fast fabric and is exposed on a slow one") {
  ModelSpec m = small_model();
  m.layers = 8;
  ParallelSpec par;
  par.dp = 4;
  par.microbatches = 2;
  par.bucket_bytes = 4 << 20;
  const Trace t = generate_transformer_trace(m, par, GpuProfile{"test", 100});
  const auto dp_exposed_fraction = [](const Replayed& r) {
    double comm = 0, exposed = 0;
    for (const RankBreakdown& b : r.ranks) {
      comm += static_cast<double>(b.communication_by_label.at("dp"));
      exposed += static_cast<double>(b.exposed_by_label.at("dp"));
    }
    return exposed / comm;
  };
  const Replayed fast = replay(t, false, 1600);
  const Replayed slow = replay(t, false, 10);
  const double f = dp_exposed_fraction(fast), s = dp_exposed_fraction(slow);
  MESSAGE("gradient AllReduce exposed: " << f * 100 << "% of it at 1.6 Tb/s, " << s * 100 << "% at 10 Gb/s; iteration "
                                         << to_us(fast.iteration) << " vs " << to_us(slow.iteration) << " us");
  CHECK(f < 0.2);
  CHECK(s > 0.5);
  CHECK(slow.iteration > fast.iteration);
}

TEST_CASE("traces round-trip through JSON Lines, and malformed ones are refused with the line") {
  const Trace t = generate_transformer_trace(small_model(), ParallelSpec{}, GpuProfile{"test", 100});
  const Trace back = parse_trace(trace_to_jsonl(t), "rt");
  CHECK(trace_to_jsonl(back) == trace_to_jsonl(t));
  CHECK_THROWS_WITH(parse_trace("{\"fabricsim_trace\": 1, \"ranks\": 2}\n{\"rank\": 0, \"id\": 0, \"kind\": \"teleport\"}\n", "bad.jsonl"),
                    "bad.jsonl:2: kind should be compute, collective, send or recv");
  Trace unmatched;
  unmatched.ranks = 2;
  unmatched.ops.resize(2);
  TraceOp send;
  send.kind = TraceOpKind::kSend;
  send.peer = 1;
  unmatched.ops[0].push_back(send);
  CHECK(check_trace(unmatched) == "1 sends but 0 receives from rank 0 to rank 1 with tag 0");
}

TEST_CASE("a Chakra trace for 8 ranks replays exactly as our own trace of the same operations") {
  // tests/chakra/dp8.*.et and dp8.jsonl were written from one set of operations by
  // tests/chakra/make_dp8.cpp: per rank forward, two backward layers each followed by a
  // gradient AllReduce over all 8 ranks, a send/receive hand-off between rank pairs, an
  // AllGather and an optimizer step.
  const std::string dir = FABRICSIM_SOURCE_DIR "/tests/chakra/";
  const Trace chakra = import_chakra(dir + "dp8", 8);
  const Trace ours = read_trace(dir + "dp8.jsonl");
  CHECK(trace_to_jsonl(chakra) == trace_to_jsonl(ours));  // the same operations, field for field
  int collectives = 0, computes = 0;
  for (const TraceOp& op : chakra.ops[0]) {
    collectives += op.kind == TraceOpKind::kCollective;
    computes += op.kind == TraceOpKind::kCompute;
  }
  CHECK(collectives == 3);
  CHECK(computes == 4);
  const auto run = [&](const std::string& workload) {
    const std::string yaml = "topology:\n  kind: nvswitch\n  preset: dgx_h100\nnetwork:\n  mtu: 64KiB\nworkload: " + workload + "\n";
    ScenarioRun r(load_config_text(yaml, "chakra"));
    r.run();
    REQUIRE(r.replay());
    REQUIRE(r.replay()->done());
    return std::pair{r.replay()->iteration_time(), r.replay()->breakdown()};
  };
  const auto a = run("{kind: chakra, prefix: " + dir + "dp8, ranks: 8}");
  const auto b = run("{kind: trace, file: " + dir + "dp8.jsonl}");
  MESSAGE("8-rank Chakra trace: iteration " << to_us(a.first) << " us; our format: " << to_us(b.first) << " us");
  CHECK(a.first == b.first);
  CHECK(a.first > us(920));  // rank 7 computes 270 + 300 + 300 + 50 us, and waits for exchanges besides
  for (std::size_t r = 0; r < 8; ++r) {
    CHECK(a.second[r].finish == b.second[r].finish);
    CHECK(a.second[r].communication == b.second[r].communication);
    CHECK(a.second[r].exposed == b.second[r].exposed);
  }
}
