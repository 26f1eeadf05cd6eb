// NCCL's communicator channels (ncclTopoPostset, src/graph/connect.cc) and what
// NCCL_MIN_CTAS, NCCL_MAX_CTAS and NCCL_IB_QPS_PER_CONNECTION change in a run: counts by
// hand from NCCL's source.
#include <doctest/doctest.h>

#include <string>

#include "app/config/config_loader.h"
#include "app/workload/tuner_facts.h"
#include "test_support.h"
#include "app/scenario/scenario.h"
#include "workloads/collectives/collective_executor.h"
#include "workloads/collectives/program_builder.h"
#include "workloads/collectives/nccl_tuning.h"
#include "workloads/collectives/tuner.h"

using namespace fabricsim;

namespace {
NcclGraph graph(int channels, double bw_intra) {
  NcclGraph g;
  g.channels = channels;
  g.bw_intra = g.bw_inter = bw_intra;
  return g;
}
}  // namespace

TEST_CASE("NCCL's communicator channels: the search's doubled, the fast-ring doubling by release, then NCCL_MAX_CTAS and NCCL_MIN_CTAS") {
  const NcclRules r226 = *nccl_rules("2.26.2");
  const NcclRules r221 = *nccl_rules("2.21.5");
  const NcclRules r219 = *nccl_rules("2.19.3");
  const NcclRules r223 = *nccl_rules("2.23.4");
  // 2 x DGX H100: the ring search's 8 channels at 48 GB/s, doubled to 16; 16 is not below
  // 16, so the fast-ring doubling adds none (2.20 on).
  const NcclGraph h100 = graph(8, 48);
  CHECK(nccl_comm_channels(r226, h100, 90, 2) == 16);
  CHECK(nccl_comm_channels(r221, h100, 90, 2) == 16);
  // 2.19: doubled again while within MAXCHANNELS (32): 8 -> 16 -> 32.
  CHECK(nccl_comm_channels(r219, h100, 90, 2) == 32);
  // One node: no fast-ring doubling; MAXCHANNELS 64 from 2.25, 32 before (18 x 2 = 36).
  const NcclGraph one_node = graph(18, 25);
  CHECK(nccl_comm_channels(r226, one_node, 90, 1) == 36);
  CHECK(nccl_comm_channels(r221, one_node, 90, 1) == 32);
  // 4 search channels at 48 GB/s across nodes: 8, below 16, so 16 on Hopper; on Blackwell
  // (10.0) only from 2.25 (minCompCap >= 90, where 2.20-2.24 ask == 90).
  const NcclGraph four = graph(4, 48);
  CHECK(nccl_comm_channels(r226, four, 90, 2) == 16);
  CHECK(nccl_comm_channels(r226, four, 100, 2) == 16);
  CHECK(nccl_comm_channels(r223, four, 100, 2) == 8);
  CHECK(nccl_comm_channels(r226, graph(4, 40), 90, 2) == 8);  // 40 GB/s: not above 45
  // NCCL_MAX_CTAS first, then NCCL_MIN_CTAS; each within MAXCHANNELS, the least no higher
  // than the most (init.cc sets both to the most).
  CHECK(nccl_comm_channels(r226, h100, 90, 2, 24, 0) == 24);
  CHECK(nccl_comm_channels(r226, h100, 90, 2, 0, 4) == 4);
  CHECK(nccl_comm_channels(r226, h100, 90, 2, 24, 12) == 12);
  CHECK(nccl_comm_channels(r226, h100, 90, 2, 8, 0) == 16);  // already at least 8
  CHECK(nccl_comm_channels(r226, h100, 90, 2, 64, 0) == 64);
  CHECK(nccl_comm_channels(r221, h100, 90, 2, 64, 0) == 32);  // MAXCHANNELS 32 before 2.25
  CHECK(nccl_comm_channels(r226, graph(0, 0), 90, 2, 24, 0) == 0);
}

TEST_CASE("NCCL_MIN_CTAS and NCCL_MAX_CTAS set the ring's channels, each at its default share of NCCL's bandwidth or less") {
  // 2 x DGX H100 (370.8 GB/s of NVLink data) under 2.26: the ring graph's 8 channels at
  // 45 GB/s (360 GB/s of bus bandwidth), which NCCL runs as 16 thread blocks of 22.5.
  // Unset, a run takes the 8 at 45.
  const ScenarioConfig config = load_config_text(two_dgx_h100_yaml("", ", nvls: false"), "<test>");
  TunerFacts f = tuner_facts(config.topology, 16);
  f.nccl_version = "2.26.2";
  const NcclGraph ring = nccl_system(f).graphs[static_cast<std::size_t>(NcclAlgo::kRing)];
  REQUIRE(ring.channels == 8);
  REQUIRE(ring.bw_intra == 45.0);
  const auto ring_choice = [&](int min_ctas, int max_ctas) {
    f.min_ctas = min_ctas;
    f.max_ctas = max_ctas;
    return choose_algorithm(CollectiveOp::kAllReduce, 256 << 20, f, "ring", "simple");
  };
  TunerChoice c = ring_choice(0, 0);
  CHECK(c.nccl_channels == 8);
  CHECK(c.nccl_channel_GBps == within(45.0, 1e-12));
  // NCCL_MIN_CTAS=24: 24 thread blocks sharing the 360 GB/s: 15 each.
  c = ring_choice(24, 0);
  CHECK(c.nccl_channels == 24);
  CHECK(c.nccl_channel_GBps == within(360.0 / 24, 1e-12));
  // NCCL_MAX_CTAS=4: 4 thread blocks, each at its default 22.5 (90 GB/s over 4 of the 8 NICs).
  c = ring_choice(0, 4);
  CHECK(c.nccl_channels == 4);
  CHECK(c.nccl_channel_GBps == within(22.5, 1e-12));
  // At least 8, where NCCL runs 16 anyway: the default run.
  c = ring_choice(8, 0);
  CHECK(c.nccl_channels == 8);
  CHECK(c.nccl_channel_GBps == within(45.0, 1e-12));
  // NCCL's own prediction does not move: its model reads the search's channels.
  CHECK(ring_choice(24, 0).nccl_time_us == ring_choice(0, 0).nccl_time_us);
}

TEST_CASE("the network section's NCCL settings reach the tuner, and NCCL_IB_QPS_PER_CONNECTION turns a connection's messages over its queue pairs") {
  const ScenarioConfig config = load_config_text(
      two_dgx_h100_yaml("").replace(two_dgx_h100_yaml("").find("network: {mtu: 64KiB}"), 21,
                                    "network: {mtu: 64KiB, nccl_version: '2.26', nccl_min_ctas: 24, nccl_max_ctas: 32, "
                                    "nccl_qps_per_connection: 2, cpu: amd}"),
      "<test>");
  TunerFacts f = tuner_facts(config.topology, 16);
  apply_nccl_settings(f, config.network);
  CHECK(f.nccl_version == "2.25");
  CHECK(f.cpu == NcclCpu::kAmd);
  CHECK(f.min_ctas == 24);
  CHECK(f.max_ctas == 32);
  CHECK(f.qps_per_connection == 2);
  // Results say which environment NCCL's model ran with.
  CHECK(model_description("auto", f) ==
        "NCCL 2.25 tuning rules, protocol auto, NCCL_MIN_CTAS=24, NCCL_MAX_CTAS=32, NCCL_IB_QPS_PER_CONNECTION=2");
  // Connection c's queue pairs are network connections 1 + 2c and 2 + 2c, taken in turn;
  // one queue pair a connection keeps the connection's own number (0 is point-to-point's).
  CHECK(nccl_network_connection(0, 2, 0) == 1);
  CHECK(nccl_network_connection(0, 2, 1) == 2);
  CHECK(nccl_network_connection(0, 2, 2) == 1);
  CHECK(nccl_network_connection(3, 2, 5) == 8);
  CHECK(nccl_network_connection(3, 1, 5) == 4);
  CHECK(nccl_network_connection(3, 0, 5) == 4);
}

TEST_CASE("one proxy per GPU: sends to another node that are ready together leave one net overhead apart") {
  // n0.gpu0 sends three 4 KiB pieces to n1.gpu0 at once, on three channels. NCCL's proxy
  // launches them one after another, 1 us each (its net overhead): the second leaves 1 us
  // after the first, the third 2 us after. Without it the three leave back to back, the
  // last two packets' times (4,160 B at 400 Gb/s: 83.2 ns each) after the first; so the
  // last arrives 2 us - 166.4 ns later with the proxy. A send alone leaves at once.
  const auto finished = [](std::int64_t proxy_ps, int pieces) {
    ScenarioRun run(load_config_text(two_dgx_h100_yaml("") + "messages:\n  - {src: n0.gpu7, dst: n0.gpu6, bytes: 64}\n", "<test>"));
    using namespace collective_building;
    CollectiveProgram p = empty_program("proxy", CollectiveOp::kAllGather, 2, 2 * pieces, 2 * pieces * 4096);
    Builder b{p};
    for (int c = 0; c < pieces; ++c) {
      b.send(0, 1, c, c, 1, {});
      b.recv(1, 0, c, c, 1, false, {});
    }
    p.proxy_op_ps = proxy_ps;
    CollectiveOptions options;
    options.check_data = false;
    options.rank_node = {0, 1};
    CollectiveExecutor x(run.network(), std::move(p), {HostId{0}, HostId{8}}, options);
    x.start();
    run.run();
    CHECK(x.done());
    return x.finished_at();
  };
  CHECK(finished(1'000'000, 3) - finished(0, 3) == 2'000'000 - 2 * 83'200);
  CHECK(finished(1'000'000, 1) == finished(0, 1));
}
