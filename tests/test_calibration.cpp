// Calibration: log parsers on the real nccl-tests and perftest layouts, the alpha-beta
// fit against known parameters, profiles and their use by a topology.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "app/studies/calibration.h"
#include "app/config/config_error.h"
#include "app/config/config_loader.h"
#include "app/config/model_files.h"
#include "app/config/profile.h"
#include "calibrate/fill_fit.h"
#include "calibrate/least_squares.h"
#include "calibrate/probe_stats.h"
#include "test_support.h"

using namespace fabricsim;

namespace {

const std::string kDir = FABRICSIM_SOURCE_DIR "/tests/calibration/";

std::string error_of(const std::string& text, bool perftest = false) {
  try {
    if (perftest) {
      parse_perftest(text, "bad.log");
    } else {
      parse_nccl_tests(text, "bad.log");
    }
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// Least squares of t = a + s/b written out from the normal equations, to check the
// library's fit against an independent computation.
std::pair<double, double> normal_equations(const std::vector<double>& s, const std::vector<double>& t) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    n += 1, sx += s[i], sy += t[i], sxx += s[i] * s[i], sxy += s[i] * t[i];
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  return {(sy - slope * sx) / n, 1 / slope};
}

}  // namespace

TEST_CASE("nccl-tests output: header columns, Rank lines, in-place columns, NCCL INFO lines, Avg bus bandwidth") {
  const NcclTestsLog log = load_nccl_tests(kDir + "synthetic_allreduce_8gpu.log");
  CHECK(log.ranks == 8);
  REQUIRE(log.samples.size() == 7);  // 1 MiB to 4 GiB by 4x
  CHECK(log.samples[0].bytes == 1048576);
  CHECK(log.samples[0].time_us == doctest::Approx(31.99));
  CHECK(log.samples[0].algbw_GBps == doctest::Approx(32.78));
  CHECK(log.samples[0].busbw_GBps == doctest::Approx(57.36));
  REQUIRE(log.samples[0].in_place_time_us.has_value());
  CHECK(*log.samples[0].in_place_time_us == doctest::Approx(31.83));
  CHECK(*log.samples[0].in_place_busbw_GBps == doctest::Approx(57.65));
  CHECK(log.samples.back().bytes == 4294967296LL);
  CHECK(log.samples.back().time_us == doctest::Approx(28658.1));
  REQUIRE(log.avg_busbw_GBps.has_value());
  CHECK(*log.avg_busbw_GBps == doctest::Approx(205.978));
}

TEST_CASE("the plain four-column tables of the published data parse") {
  const NcclTestsLog h100 = load_nccl_tests(kDir + "h100-1node-nvls-allreduce.txt");
  CHECK(h100.ranks == 0);  // the table does not say; the command asks for --ranks
  REQUIRE(h100.samples.size() == 6);
  CHECK(h100.samples[0].bytes == 134217728);
  CHECK(h100.samples[5].busbw_GBps == doctest::Approx(473.60));
  CHECK_FALSE(h100.samples[0].in_place_time_us.has_value());
}

TEST_CASE("malformed nccl-tests logs give the file and line") {
  const std::string header =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  CHECK(error_of(header + "     1048576        262144     float     sum      -1    31.99\n") ==
        "bad.log:2: expected at least 8 columns, got 6");
  CHECK(error_of(header + "     1048576        262144     float     sum      -1    fast   32.78   57.36      0\n") ==
        "bad.log:2: expected a number for time, got 'fast'");
  CHECK(error_of("134217728 613.3 218.85\n") ==
        "bad.log:1: expected four columns (size, time, algbw, busbw) or an nccl-tests header before the data");
  CHECK(error_of("# size count type time\n") == "bad.log:1: a header without time, algbw and busbw columns");
  CHECK(error_of("# nothing measured\n") == "bad.log: no measurements found");
  CHECK(error_of(header + "1 1 float sum -1 1 1 1 0\n# Avg bus bandwidth    : lots\n") ==
        "bad.log:3: expected a number for the average bus bandwidth, got 'lots'");
}

TEST_CASE("perftest bandwidth and latency tables, MB/sec meaning 2^20 bytes per second") {
  const PerftestLog bw = load_perftest(kDir + "perftest_write_bw.log");
  CHECK(bw.kind == PerftestLog::Kind::kBandwidth);
  REQUIRE(bw.samples.size() == 23);  // 2 B to 8 MiB
  CHECK(bw.samples.back().bytes == 8388608);
  // 47669.51 MB/sec * 1048576 * 8 / 1e9
  CHECK(bw.samples.back().bandwidth_Gbps == within(399.88, 1e-4));
  const PerftestLog lat = load_perftest(kDir + "perftest_write_lat.log");
  CHECK(lat.kind == PerftestLog::Kind::kLatency);
  REQUIRE(lat.samples.size() == 7);
  CHECK(lat.samples[0].latency_us == doctest::Approx(1.80));  // t_typical, not t_min
  const PerftestLog gbits = parse_perftest(
      " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
      " 65536      5000           391.20             390.85               0.745484\n",
      "gbits.log");
  CHECK(gbits.samples[0].bandwidth_Gbps == doctest::Approx(390.85));
}

TEST_CASE("malformed perftest logs give the file and line") {
  CHECK(error_of(" #bytes #iterations BW peak[kB/sec] BW average[kB/sec] MsgRate[Mpps]\n", true) ==
        "bad.log:1: unknown bandwidth unit in 'BW average[kB/sec]'");
  CHECK(error_of(" #bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]\n 65536 5000 11664.81\n", true) ==
        "bad.log:2: expected at least 4 columns, got 3");
  CHECK(error_of(" #bytes #iterations t_min[usec]\n", true) == "bad.log:1: a header without a BW average or t_typical/t_avg column");
  CHECK(error_of("nothing here\n", true) == "bad.log: no perftest table found (a line starting with #bytes, then rows)");
}

TEST_CASE("the fit recovers alpha and beta within 1% from a log generated from known values") {
  // tests/calibration/synthetic_allreduce_8gpu.log: alpha 25 us, beta 150 GB/s, printed
  // with nccl-tests' rounding.
  const NcclTestsLog log = load_nccl_tests(kDir + "synthetic_allreduce_8gpu.log");
  std::vector<std::int64_t> bytes;
  std::vector<double> times;
  for (const auto& s : log.samples) bytes.push_back(s.bytes), times.push_back(s.time_us);
  const AlphaBetaFit fit = fit_alpha_beta(bytes, times);
  CHECK(fit.alpha_us == within(25.0, 0.01));
  CHECK(fit.beta_GBps == within(150.0, 0.01));
  CHECK(fit.rms_relative < 0.001);
  // Exact points: exact answer.
  const AlphaBetaFit exact = fit_alpha_beta({1000, 2000, 4000}, {10.0 + 1000 / 50e3, 10.0 + 2000 / 50e3, 10.0 + 4000 / 50e3});
  CHECK(exact.alpha_us == within(10.0, 1e-9));
  CHECK(exact.beta_GBps == within(50.0, 1e-9));
  CHECK_THROWS_AS(fit_alpha_beta({1000, 1000}, {1.0, 2.0}), std::invalid_argument);
}

TEST_CASE("the fit on the published 8x H100 NVLS log agrees with the normal equations, residuals included") {
  const NcclTestsLog log = load_nccl_tests(kDir + "h100-1node-nvls-allreduce.txt");
  std::vector<std::int64_t> bytes;
  std::vector<double> times, s_us;
  for (const auto& s : log.samples) {
    bytes.push_back(s.bytes), times.push_back(s.time_us);
    s_us.push_back(static_cast<double>(s.bytes) * 1e-3);  // bytes / (GB/s) in us: bytes * 1e-3 / GBps
  }
  const AlphaBetaFit fit = fit_alpha_beta(bytes, times);
  const auto [alpha, beta] = normal_equations(s_us, times);
  CHECK(fit.alpha_us == within(alpha, 1e-9));
  CHECK(fit.beta_GBps == within(beta, 1e-9));
  CHECK(fit.alpha_us == within(151.84, 1e-3));
  CHECK(fit.beta_GBps == within(273.24, 1e-3));
  REQUIRE(fit.relative_residuals.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) {
    const double fitted = alpha + s_us[i] / beta;
    CHECK(fit.relative_residuals[i] == doctest::Approx((times[i] - fitted) / times[i]).epsilon(1e-9));
  }
  CHECK(std::fabs(fit.relative_residuals[0]) < 0.05);  // 128 MiB is the worst point: -4.85%
}

TEST_CASE("the fill fit recovers a rate and rounds from exact times, and sees no fill where there is none") {
  // t = 25 + (S + 3 R) / 400 GB/s, R 8 MiB below 1 GiB and 16 MiB from it: at 128 MiB
  // 25 + (134217728 + 25165824) / 4e5 = 423.4554 us, and so on.
  const std::vector<std::int64_t> sizes{128 << 20, 512 << 20, 1LL << 30, 4LL << 30};
  const std::vector<std::int64_t> rounds{8 << 20, 8 << 20, 16 << 20, 16 << 20};
  std::vector<double> times;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    times.push_back(25 + (static_cast<double>(sizes[i]) + 3.0 * static_cast<double>(rounds[i])) / 4e5);
  }
  CHECK(times[0] == within(423.455, 1e-5));
  const FillFit f = fit_fill(sizes, rounds, times, 25);
  CHECK(f.beta_GBps == within(400.0, 1e-9));
  CHECK(f.rounds == within(3.0, 1e-9));
  CHECK(f.rms_relative < 1e-12);
  // Times with no fill in them (t = 25 + S / 400 GB/s, the rounds' pattern unseen): 0 rounds.
  std::vector<double> plain;
  for (const std::int64_t s : sizes) plain.push_back(25 + static_cast<double>(s) / 4e5);
  const FillFit none = fit_fill(sizes, rounds, plain, 25);
  CHECK(none.rounds < 1e-6);
  CHECK(none.beta_GBps == within(400.0, 1e-9));
  CHECK_THROWS_AS(fit_fill({1 << 20}, {1 << 20}, {30.0}, 25), std::invalid_argument);
  CHECK_THROWS_AS(fit_fill(sizes, rounds, std::vector<double>(4, 20.0), 25), std::invalid_argument);
}

TEST_CASE("the fill fit recovers a cost per visit beside the rate and the rounds, and none where there is none") {
  // t = 25 + (S + 2 R) / 300 GB/s + V x 0.5 us, with NVLS's 16 channels and 8 heads: R 8 MiB
  // below 1 GiB, 16 MiB from it; V = S / 16 / 8 / chunk x 8 = S / 1 MiB below 1 GiB (64 KiB
  // chunks), S / 2 MiB from it. At 128 MiB: 25 + (134217728 + 16777216) / 3e5 + 128 x 0.5
  // = 592.3165 us.
  const std::vector<std::int64_t> sizes{128 << 20, 512 << 20, 1LL << 30, 4LL << 30};
  const std::vector<std::int64_t> rounds{8 << 20, 8 << 20, 16 << 20, 16 << 20};
  const std::vector<std::int64_t> visits{128, 512, 512, 2048};
  std::vector<double> times, no_visits;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double bandwidth_us = (static_cast<double>(sizes[i]) + 2.0 * static_cast<double>(rounds[i])) / 3e5;
    times.push_back(25 + bandwidth_us + static_cast<double>(visits[i]) * 0.5);
    no_visits.push_back(25 + bandwidth_us);
  }
  CHECK(times[0] == within(592.3165, 1e-6));
  const FillFit f = fit_fill(sizes, rounds, times, 25, visits);
  CHECK(f.beta_GBps == within(300.0, 1e-9));
  CHECK(f.rounds == within(2.0, 1e-9));
  CHECK(f.visit_us == within(0.5, 1e-9));
  CHECK(f.rms_relative < 1e-12);
  const FillFit none = fit_fill(sizes, rounds, no_visits, 25, visits);
  CHECK(none.visit_us < 1e-9);
  CHECK(none.rounds == within(2.0, 1e-9));
  // Without visits the same times fit the old way: the visits' cost goes to the rate.
  const FillFit old = fit_fill(sizes, rounds, times, 25);
  CHECK(old.visit_us == 0);
  CHECK(old.beta_GBps < 300.0);
}

TEST_CASE("an NVLS log's fit takes NCCL's latency and the kernel's channels from the GPU and the release") {
  // The H100 table (NCCL's Hopper NVLS: 16 channels; 2.28's tables: 25 us). Its rounds by
  // hand: 16 x 8 x 64 KiB = 8 MiB below 1 GiB (NCCL's chunk shrinks from 128 KiB below
  // 64 x 128 x 128 KiB), 16 MiB from 1 GiB; the fit must be fit_fill's on those.
  ImportRequest request;
  request.nccl_tests_logs = {kDir + "h100-1node-nvls-allreduce.txt"};
  request.ranks = 8;
  request.algorithm = "nvls";
  const CollectiveCalibration c = calibrate_collective(load_nccl_tests(request.nccl_tests_logs[0]), request);
  CHECK(c.nvls_channels == 16);
  const NcclTestsLog log = load_nccl_tests(request.nccl_tests_logs[0]);
  // Its visits: a channel's rounds (size / 16 / 8 / the chunk) x 8 heads.
  std::vector<std::int64_t> sizes, rounds, visits;
  std::vector<double> times;
  for (const auto& s : log.samples) {
    sizes.push_back(s.bytes);
    rounds.push_back(s.bytes < (1LL << 30) ? 8 << 20 : 16 << 20);
    visits.push_back(s.bytes / 16 / 8 / (s.bytes < (1LL << 30) ? 65536 : 131072) * 8);
    times.push_back(s.time_us);
  }
  const FillFit f = fit_fill(sizes, rounds, times, 25, visits);
  CHECK(c.fit.alpha_us == within(25.0, 1e-12));
  CHECK(c.fit.beta_GBps == within(f.beta_GBps, 1e-12));
  CHECK(c.nvls_fill_rounds == within(f.rounds, 1e-12));
  CHECK(c.nvls_head_cost_us == within(f.visit_us, 1e-12));
  CHECK(f.visit_us > 0.5);
  // Blackwell under 2.28 runs 24 channels in one domain, under 2.25 32; 2.18's NVLS latency is 23 us.
  request.compute_capability = 100;
  CHECK(calibrate_collective(log, request).nvls_channels == 24);
  request.nccl_version = "2.25";
  CHECK(calibrate_collective(log, request).nvls_channels == 32);
  request.nccl_version = "2.18";
  CHECK(calibrate_collective(log, request).fit.alpha_us == within(23.0, 1e-12));
}

TEST_CASE("import translates busbw into link bandwidth with the busbw factor and the topology") {
  ImportRequest one_node;
  one_node.nccl_tests_logs = {kDir + "synthetic_allreduce_8gpu.log"};
  const ImportResult r = import_logs(one_node);
  REQUIRE(r.profile.nvlink.has_value());
  CHECK_FALSE(r.profile.nic.has_value());
  const double fitted_beta = r.collectives[0].fit.beta_GBps;
  // busbw = algbw * 2(n-1)/n; in one NVSwitch node that is each GPU's bandwidth. The log was
  // generated with beta 150 GB/s and alpha 25 us: 262.5 GB/s and 25/28 us per hop.
  CHECK(static_cast<double>(r.profile.nvlink->bandwidth.bits_per_second) / 8e9 == within(fitted_beta * 1.75, 1e-6));
  CHECK(static_cast<double>(r.profile.nvlink->bandwidth.bits_per_second) / 8e9 == within(150.0 * 1.75, 0.01));
  // alpha over 2(n-1) ring steps of two hops each.
  CHECK(to_us(r.profile.nvlink->latency) == within(r.collectives[0].fit.alpha_us / 28, 1e-4));
  CHECK(to_us(r.profile.nvlink->latency) == within(25.0 / 28, 0.01));

  ImportRequest two_nodes = one_node;  // pretend the 8 ranks were 2 nodes x 4 GPUs, 2 NICs each
  two_nodes.gpus_per_node = 4;
  two_nodes.nics_per_node = 2;
  const ImportResult r2 = import_logs(two_nodes);
  REQUIRE(r2.profile.nic.has_value());
  CHECK(static_cast<double>(r2.profile.nic->bandwidth.bits_per_second) / 8e9 == within(fitted_beta * 1.75 / 2, 1e-6));
  CHECK(static_cast<double>(r2.profile.nic->bandwidth.bits_per_second) / 8e9 == within(150.0 * 1.75 / 2, 0.01));

  ImportRequest no_ranks;
  no_ranks.nccl_tests_logs = {kDir + "h100-1node-nvls-allreduce.txt"};
  CHECK_THROWS_AS(import_logs(no_ranks), std::invalid_argument);

  ImportRequest nic;
  nic.perftest_logs = {kDir + "perftest_write_bw.log", kDir + "perftest_write_lat.log"};
  const ImportResult r3 = import_logs(nic);
  REQUIRE(r3.profile.nic.has_value());
  // Generated at 400 Gb/s with 0.05 us per message; the table's rounding costs a little.
  CHECK(r3.profile.nic->bandwidth.gbps_value() == within(400.0, 0.01));
  CHECK(to_us(r3.profile.nic->latency) == within(0.90, 1e-6));  // 1.80 us one way over two links
  REQUIRE(r3.profile.fits.size() == 1);
  CHECK(r3.profile.fits[0].alpha_us == doctest::Approx(0.05).epsilon(0.5));
}

TEST_CASE("a profile written by import reads back, and its errors are located") {
  ImportRequest request;
  request.nccl_tests_logs = {kDir + "synthetic_allreduce_8gpu.log"};
  request.perftest_logs = {kDir + "perftest_write_bw.log"};
  LinkProfile p = import_logs(request).profile;
  p.reduce_GBps_bf16 = 1234.5;
  p.matmul_tflops = 700.25;
  p.nvls = LinkSpec{};
  p.nvls->bandwidth = Bandwidth::gBps(466.5);
  p.nvls->latency = 25000000;
  p.nvls_fill_rounds = 3.8125;
  p.launch_latency_us = 4.5;
  const auto path = test_temp_path("fabricsim_test_profile.yaml");
  std::ofstream(path) << profile_yaml(p);
  const LinkProfile q = load_profile(path.string());
  REQUIRE(q.nvlink.has_value());
  CHECK(q.nvlink->bandwidth.gbps_value() == within(p.nvlink->bandwidth.gbps_value(), 1e-5));
  CHECK(to_us(q.nvlink->latency) == within(to_us(p.nvlink->latency), 1e-5));
  CHECK(q.nic->bandwidth.gbps_value() == within(p.nic->bandwidth.gbps_value(), 1e-5));
  CHECK(*q.reduce_GBps_bf16 == within(1234.5, 1e-6));
  CHECK(*q.matmul_tflops == within(700.25, 1e-9));
  CHECK(*q.launch_latency_us == within(4.5, 1e-9));
  REQUIRE(q.nvls_fill_rounds);
  CHECK(*q.nvls_fill_rounds == within(3.8125, 1e-9));
  CHECK(q.nvls->latency == 25000000);
  REQUIRE(q.fits.size() == 2);
  CHECK(q.fits[0].ranks == 8);
  std::filesystem::remove(path);

  std::ofstream(path) << "version: 1\nnvlink: {bandwidth: fast}\n";
  try {
    load_profile(path.string());
    FAIL("expected an error");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.find(path.string() + ":2:") == 0);
    CHECK(what.find("nvlink.bandwidth") != std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST_CASE("a topology's profile: replaces the preset's NVLink and NVLS figures, and a cluster's the NIC's") {
  const ScenarioConfig c = load_config_file(FABRICSIM_SOURCE_DIR "/configs/calibrated/dgx_h100_node.yaml");
  const LinkProfile p = load_profile(FABRICSIM_SOURCE_DIR "/configs/calibrated/h100_nvls.profile.yaml");
  // An NVLS log calibrates NVLS, not the links: the NVLinks keep the preset's 18 x 20.6 GB/s of data.
  REQUIRE(p.nvls);
  CHECK_FALSE(p.nvlink);
  CHECK(c.topology.nvswitch.links_per_gpu() == 18);
  CHECK(c.topology.nvswitch.gpu_bandwidth().bits_per_second == Bandwidth{2'966'400'000'000}.bits_per_second);
  CHECK(c.topology.nvswitch.nvls_bandwidth == p.nvls->bandwidth);
  CHECK(c.topology.nvswitch.nvls_latency == p.nvls->latency);
  REQUIRE(p.nvls_fill_rounds);
  CHECK(c.topology.nvswitch.nvls_fill_rounds == *p.nvls_fill_rounds);

  const auto profile_path = test_temp_path("fabricsim_test_cluster_profile.yaml");
  std::ofstream(profile_path) << "version: 1\nnvlink: {bandwidth: 360GBps, latency: 1us}\nnic: {bandwidth: 48GBps, latency: 700ns}\n";
  const std::string yaml = "name: t\ntopology:\n  kind: cluster\n  nodes: 2\n  profile: " + profile_path.string() +
                           "\n  node: {preset: dgx_h100}\n  fabric: {kind: rail_optimized, spines: 2, fabric_link: {bandwidth: 400Gbps}}\n";
  const ScenarioConfig k = load_config_text(yaml, "<test>");
  CHECK(k.topology.cluster.nic_link.bandwidth == Bandwidth::gBps(48));
  CHECK(k.topology.cluster.nic_link.latency == ns(700));
  CHECK(k.topology.cluster.node.gpu_bandwidth().bits_per_second == Bandwidth::gBps(360).bits_per_second);
  CHECK(k.topology.cluster.node.latency == us(1));
  std::filesystem::remove(profile_path);
}

TEST_CASE("probe statistics: median, extremes and spread by hand") {
  const ProbeStat odd = summarize({5.0, 1.0, 3.0});
  CHECK(odd.median == 3.0);
  CHECK(odd.min == 1.0);
  CHECK(odd.max == 5.0);
  CHECK(odd.repetitions == 3);
  CHECK(odd.spread() == within(4.0 / 3.0, 1e-12));
  const ProbeStat even = summarize({4.0, 1.0, 2.0, 10.0});
  CHECK(even.median == 3.0);  // (2 + 4) / 2
  CHECK(summarize({}).repetitions == 0);
}

TEST_CASE("a GPU profile's figures reach the trace generator and the collective's reduce cost") {
  const auto path = test_temp_path("fabricsim_test_gpu_profile.yaml");
  std::ofstream(path) << "version: 1\ngpu: {reduce_fp32: 1200GBps, reduce_bf16: 1300GBps, matmul_tflops: 650.5, launch_latency: 2.5us}\n";
  CHECK(load_gpu_profile(path.string()).achieved_tflops == within(650.5, 1e-12));
  const std::string yaml = "name: t\ntopology: {kind: nvswitch, preset: dgx_h100}\nworkload: {kind: collective, op: all_reduce, "
                           "bytes: 1MiB, profile: " + path.string() + "}\n";
  CHECK(load_config_text(yaml, "<test>").workload.collective.reduce_bytes_per_second == within(1200e9, 1e-12));
  // Written out, the config's own figure wins.
  const std::string own = "name: t\ntopology: {kind: nvswitch, preset: dgx_h100}\nworkload: {kind: collective, op: all_reduce, "
                          "bytes: 1MiB, reduce_bandwidth: 100GBps, profile: " + path.string() + "}\n";
  CHECK(load_config_text(own, "<test>").workload.collective.reduce_bytes_per_second == within(100e9, 1e-12));
  std::filesystem::remove(path);
}

TEST_CASE("calibrate gpu's profile: PCIe from the slower pinned copy, NVLink from peers, GPU figures") {
  // The H200 measured for the accuracy issue: h2d 55.4 and d2h 55.3 GB/s pinned, launch
  // 3.80 us, bf16 reduce 1,323 GB/s, bf16 matmul 783 TFLOP/s; one GPU, so no peers.
  const auto stat = [](double v) { return ProbeStat{v, v, v, 20}; };
  GpuProbeReport r;
  r.driver = "CUDA 12.8";
  GpuDeviceFigures d;
  d.name = "NVIDIA H200";
  d.h2d_GBps = stat(55.4);
  d.d2h_GBps = stat(55.3);
  d.launch_us = stat(3.80);
  d.reduce_bf16_GBps = stat(1323);
  d.reduce_fp32_GBps = stat(1300);
  d.matmul_tflops = stat(783);
  r.devices.push_back(d);
  LinkProfile p = gpu_profile(r);
  REQUIRE(p.pcie);
  CHECK(static_cast<double>(p.pcie->bandwidth.bits_per_second) / 8e9 == within(55.3, 1e-9));
  CHECK_FALSE(p.pcie_latency_given);
  CHECK_FALSE(p.nvlink);
  CHECK(*p.matmul_tflops == 783);
  CHECK(*p.launch_latency_us == within(3.80, 1e-12));
  // Written and read back: PCIe's bandwidth only, and a cluster keeps its PCIe latency.
  const std::string yaml = profile_yaml(p);
  CHECK(yaml.find("pcie: {bandwidth: 55.300GBps}") != std::string::npos);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "fabricsim_gpu_profile_test";
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "gpu.profile.yaml") << yaml; }
  const LinkProfile back = load_profile((dir / "gpu.profile.yaml").string());
  REQUIRE(back.pcie);
  CHECK_FALSE(back.pcie_latency_given);
  const std::string cluster = "topology:\n  kind: cluster\n  nodes: 2\n  profile: " + (dir / "gpu.profile.yaml").string() +
                              "\n  node: {preset: dgx_h100}\n  pcie: {latency: 700ns}\n  nic: {bandwidth: 400Gbps}\n"
                              "  fabric: {kind: rail_optimized, spines: 1, fabric_link: {bandwidth: 400Gbps}}\n";
  const ScenarioConfig c = load_config_text(cluster, "<test>");
  CHECK(static_cast<double>(c.topology.cluster.pcie.bandwidth.bits_per_second) / 8e9 == within(55.3, 1e-9));
  CHECK(c.topology.cluster.pcie.latency == ns(700));
  // Two GPUs with peer access: NVLink at the peer copy's rate, a quarter of the load's latency per hop.
  GpuPeerFigures peer;
  peer.src = 0, peer.dst = 1, peer.peer_access = true;
  peer.bandwidth_GBps = stat(380);
  peer.latency_us = stat(2.0);
  r.devices.push_back(d);
  r.peers.push_back(peer);
  p = gpu_profile(r);
  REQUIRE(p.nvlink);
  CHECK(static_cast<double>(p.nvlink->bandwidth.bits_per_second) / 8e9 == within(380, 1e-9));
  CHECK(p.nvlink->latency == ns(500));
  std::filesystem::remove_all(dir);
}

TEST_CASE("weighted least squares solves a line by hand and refuses terms it cannot tell apart") {
  // y = 2 + 3 x through (1, 5), (2, 8), (3, 11): exact, whatever the weights.
  const std::vector<std::vector<double>> rows{{1, 1}, {1, 2}, {1, 3}};
  const auto x = weighted_least_squares(rows, {5, 8, 11}, {1, 0.25, 4});
  REQUIRE(x);
  CHECK((*x)[0] == within(2.0, 1e-12));
  CHECK((*x)[1] == within(3.0, 1e-12));
  // y = 1, 2, 4 at x = 1, 2, 3, unweighted: the normal equations by hand are 3a + 6b = 7 and
  // 6a + 14b = 17, so b = 3/2 and a = -2/3.
  const auto fit = weighted_least_squares(rows, {1, 2, 4}, {1, 1, 1});
  REQUIRE(fit);
  CHECK((*fit)[0] == within(-2.0 / 3.0, 1e-12));
  CHECK((*fit)[1] == within(1.5, 1e-12));
  // A term in proportion to another, or all zero: nothing to solve.
  CHECK_FALSE(weighted_least_squares({{1, 2}, {2, 4}, {3, 6}}, {1, 2, 3}, {1, 1, 1}));
  CHECK_FALSE(weighted_least_squares({{1, 0}, {2, 0}}, {1, 2}, {1, 1}));
}
