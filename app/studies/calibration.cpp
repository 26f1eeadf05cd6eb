#include "app/studies/calibration.h"

#include "calibrate/fill_fit.h"
#include "calibrate/p2p_fit.h"
#include "calibrate/probe_stats.h"
#include "workloads/collectives/nccl_p2p.h"
#include "workloads/collectives/nccl_protocol.h"
#include "workloads/collectives/nvls.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace fabricsim {

int latency_steps(CollectiveOp op, int ranks) {
  const int n = std::max(2, ranks);
  switch (op) {
    case CollectiveOp::kAllReduce: return 2 * (n - 1);
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kSendRecv: return 1;
    default: return n - 1;
  }
}

namespace {

Bandwidth from_GBps(double gbytes_per_second) {
  // A fit can only give this from a log whose times are not a bandwidth's (1e308 us, or
  // times that fall as sizes grow): refused rather than written into a profile.
  if (!(gbytes_per_second > 1e-6 && gbytes_per_second < 1e7)) {
    throw std::invalid_argument("the fitted bandwidth is " + std::to_string(gbytes_per_second) +
                                " GB/s; expected a log whose times grow with size to give a positive one (check its time column)");
  }
  return Bandwidth{static_cast<std::int64_t>(std::llround(gbytes_per_second * 8e9))};
}

Time from_us(double us) { return static_cast<Time>(std::llround(std::max(0.0, us) * 1e6)); }

std::string format(const char* fmt, double a, double b = 0, double c = 0, double d = 0, double e = 0, double f = 0) {
  char buf[400];
  std::snprintf(buf, sizeof buf, fmt, a, b, c, d, e, f);
  return buf;
}

}  // namespace

void apply_perftest(const PerftestLog& log, const std::string& path, LinkProfile& profile, std::string& out) {
  profile.sources.push_back("perftest: " + path);
  LinkSpec nic = profile.nic.value_or(LinkSpec{});
  if (log.kind == PerftestLog::Kind::kBandwidth) {
    // Per message time in a pipelined stream: size / bandwidth; its fit gives the
    // link rate (beta) and the per-message overhead (alpha).
    std::vector<std::int64_t> bytes;
    std::vector<double> times;
    for (const auto& s : log.samples) {
      if (s.bandwidth_Gbps <= 0) continue;
      bytes.push_back(s.bytes);
      times.push_back(static_cast<double>(s.bytes) * 8 / (s.bandwidth_Gbps * 1e3));
    }
    const AlphaBetaFit fit = fit_alpha_beta(bytes, times);
    nic.bandwidth = from_GBps(fit.beta_GBps);
    CollectiveFitRecord f;
    f.log = path;
    f.op = "rdma_write_bw";
    f.ranks = 2;
    f.alpha_us = fit.alpha_us;
    f.beta_GBps = fit.beta_GBps;
    f.busbw_asymptote_GBps = fit.beta_GBps;
    f.rms_relative_residual = fit.rms_relative;
    f.relative_residuals = fit.relative_residuals;
    profile.fits.push_back(f);
    out += "perftest " + path + ": bandwidth, " + std::to_string(log.samples.size()) + " sizes\n";
    out += format("  fit  per message %.4f us + size / %.3f GB/s (%.1f Gb/s), rms residual %.2f%%\n", fit.alpha_us,
                  fit.beta_GBps, fit.beta_GBps * 8, fit.rms_relative * 100);
  } else {
    // One-way latency of the smallest message, NIC to NIC through one switch: two links.
    const auto smallest = std::min_element(log.samples.begin(), log.samples.end(),
                                           [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
    nic.latency = from_us(smallest->latency_us / 2);
    out += "perftest " + path + ": latency, " + std::to_string(log.samples.size()) + " sizes\n";
    out += format("  one-way %.3f us at %.0f bytes -> %.3f us per link\n", smallest->latency_us,
                  static_cast<double>(smallest->bytes), smallest->latency_us / 2);
  }
  profile.nic = nic;
}

CollectiveCalibration calibrate_collective(const NcclTestsLog& log, const ImportRequest& request) {
  CollectiveCalibration c;
  c.log = log;
  c.ranks = request.ranks > 0 ? request.ranks : log.ranks;
  if (c.ranks < 2) {
    throw std::invalid_argument(log.name + ": the log does not say how many ranks ran (no \"# Rank\" lines); pass --ranks N");
  }
  std::vector<std::int64_t> bytes;
  std::vector<double> times;
  for (const auto& s : log.samples) {
    if (s.bytes <= 0 || s.time_us <= 0) continue;
    bytes.push_back(s.bytes);
    times.push_back(s.time_us);
  }
  const int gpus_per_node = request.gpus_per_node > 0 ? request.gpus_per_node : c.ranks;
  if (request.op == CollectiveOp::kAllToAll) {
    // NCCL's p2p kernel (workloads/collectives/nccl_p2p.h): each size's plan as NCCL makes
    // it, the launch given (P2pKernelSpec's), the rest fitted; single-node only.
    if (c.ranks > gpus_per_node) {
      throw std::invalid_argument(log.name + ": an AllToAll log of more than one node; calibrate from a single node's log");
    }
    NcclP2pFacts facts;
    facts.ranks = c.ranks;
    facts.comm_channels = request.p2p_channels;
    facts.nvlinks_per_gpu = (request.p2p_channels + 1) / 2;
    facts.nccl_minor = nccl_minor_version(request.nccl_version);
    std::vector<P2pFitPoint> points;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      facts.bytes_per_peer = bytes[i] / c.ranks;
      const NcclP2pPlan plan = nccl_p2p_plan(facts);
      P2pFitPoint p;
      p.ll = plan.protocol == NcclProtocol::kLL;
      p.batches = plan.batches;
      p.send_bytes = static_cast<double>(plan.most_sends_per_batch) * static_cast<double>(plan.part_bytes);
      p.drain_bytes = static_cast<double>(std::min(plan.part_bytes, plan.step_bytes));
      p.time_us = times[i];
      points.push_back(p);
    }
    c.p2p = true;
    c.p2p_kernel = P2pKernelSpec{};
    const double launch_us = static_cast<double>(c.p2p_kernel.launch_latency) * 1e-6;
    P2pFit fit = fit_p2p_kernel(points, launch_us);
    c.p2p_kernel.channel_GBps = fit.channel_GBps;
    c.p2p_kernel.ll_channel_GBps = fit.ll_channel_GBps;
    c.p2p_kernel.drain_GBps = fit.drain_GBps;
    c.p2p_kernel.batch_latency = from_us(std::max(0.0, fit.batch_us));
    c.p2p_kernel.ll_batch_latency = from_us(std::max(0.0, fit.ll_batch_us));
    c.fit.alpha_us = launch_us;
    c.fit.beta_GBps = fit.channel_GBps;
    c.fit.residuals_us = std::move(fit.residuals.residuals_us);
    c.fit.relative_residuals = std::move(fit.residuals.relative_residuals);
    c.fit.rms_relative = fit.residuals.rms_relative;
    return c;
  }
  c.nvls = request.algorithm == "nvls" || (request.algorithm.empty() && log.mentions_nvls);
  if (c.nvls) {
    // NVLS (docs/collectives.md): time = NCCL's own NVLS latency (its tuning tables) +
    // (size + rounds x one round of the kernel's chunks) / the switch layer's reduction
    // rate (nvls_pipeline_fill_ps) + a channel's visits to the heads x their cost
    // (nvls_head_visits_ps): the rate, the rounds and the cost fitted on relative error,
    // as accuracy is judged per size; single-node only.
    if (request.op != CollectiveOp::kAllReduce) throw std::invalid_argument(log.name + ": NVLS calibration reads all_reduce logs");
    if (c.ranks > gpus_per_node) {
      throw std::invalid_argument(log.name + ": an NVLS log of more than one node; calibrate from a single node's log");
    }
    const auto rules = nccl_rules(request.nccl_version);
    if (!rules) throw std::invalid_argument("no NCCL rules for version " + request.nccl_version);
    c.nvls_channels = nccl_nvls_run_channels(request.compute_capability, 1, rules->blackwell_lists, rules->nvls_blackwell_domain_channels);
    std::vector<std::int64_t> rounds;  // one round's bytes: a rate of a byte a picosecond, one round
    std::vector<std::int64_t> visits;  // a channel's visits to the heads: a cost of 1 ps a visit
    for (const std::int64_t b : bytes) {
      const std::int64_t chunk = nccl_nvls_chunk_bytes(false, b, c.nvls_channels, c.ranks, 1);
      rounds.push_back(nvls_pipeline_fill_ps(request.op, b, c.nvls_channels, c.ranks, chunk, 1e12, 1));
      visits.push_back(nvls_head_visits_ps(b, c.nvls_channels, c.ranks, chunk, 1));
    }
    const int nvls = static_cast<int>(NcclAlgo::kNvls), simple = nccl_proto_index(NcclProtocol::kSimple);
    const double nccl_latency_us = rules->base[nvls][simple] + rules->hw[0][nvls][simple];  // hw 0: NVLink
    const FillFit fill = fit_fill(bytes, rounds, times, nccl_latency_us, visits);
    c.nvls_fill_rounds = fill.rounds;
    c.nvls_head_cost_us = fill.visit_us;
    c.fit.alpha_us = fill.latency_us;
    c.fit.beta_GBps = fill.beta_GBps;
    c.fit.residuals_us = fill.residuals_us;
    c.fit.relative_residuals = fill.relative_residuals;
    c.fit.rms_relative = fill.rms_relative;
    c.busbw_asymptote_GBps = c.fit.beta_GBps * busbw_factor(request.op, c.ranks);
    c.link.bandwidth = from_GBps(c.fit.beta_GBps);
    c.link.latency = from_us(c.fit.alpha_us);
    return c;
  }
  c.fit = fit_alpha_beta(bytes, times);
  c.busbw_asymptote_GBps = c.fit.beta_GBps * busbw_factor(request.op, c.ranks);
  const int nics_per_node = request.nics_per_node > 0 ? request.nics_per_node : gpus_per_node;
  c.inter_node = c.ranks > gpus_per_node;
  // The fixed cost spread over the algorithm's steps, each crossing two links (to the
  // switch and out of it).
  const double per_link_latency_us = std::max(0.0, c.fit.alpha_us) / (2.0 * latency_steps(request.op, c.ranks));
  if (c.inter_node) {
    // One channel per NIC, each crossing the node boundary: busbw is the node's NIC
    // bandwidth (docs/calibration.md).
    c.link.bandwidth = from_GBps(c.busbw_asymptote_GBps / nics_per_node);
  } else {
    // Inside one NVSwitch node the ring's busbw is what each GPU moves into the switch layer.
    c.link.bandwidth = from_GBps(c.busbw_asymptote_GBps);
  }
  c.link.latency = from_us(per_link_latency_us);
  return c;
}

ImportResult import_logs(const ImportRequest& request) {
  if (request.nccl_tests_logs.empty() && request.perftest_logs.empty()) {
    throw std::invalid_argument("calibrate import: give at least one --nccl-tests or --perftest log");
  }
  ImportResult r;
  std::string& out = r.report;
  for (const auto& path : request.nccl_tests_logs) {
    const CollectiveCalibration c = calibrate_collective(load_nccl_tests(path), request);
    r.profile.sources.push_back("nccl-tests " + std::string(op_name(request.op)) + ": " + path);
    out += "nccl-tests " + path + ": " + op_name(request.op) + ", " + std::to_string(c.ranks) + " ranks, " +
           std::to_string(c.log.samples.size()) + " sizes\n";
    if (c.p2p) {
      const P2pKernelSpec& k = c.p2p_kernel;
      out += format("  fit  NCCL's p2p kernel: time = %.3f us launch + batches x (fixed cost + a batch's sends / a channel's rate [+ Simple's last step / the drain rate]) (rms residual %.2f%%)\n",
                    c.fit.alpha_us, c.fit.rms_relative * 100);
      out += format("       Simple: %.3f GB/s a channel, %.3f us a batch, drain %.3f GB/s; LL: %.3f GB/s a channel (payload), %.3f us a batch\n",
                    k.channel_GBps, static_cast<double>(k.batch_latency) * 1e-6, k.drain_GBps, k.ll_channel_GBps,
                    static_cast<double>(k.ll_batch_latency) * 1e-6);
    } else if (c.nvls) {
      out += format("  fit  time = %.3f us (NCCL's NVLS latency) + (size + %.3f rounds) / %.3f GB/s + visits x %.3f us   (busbw asymptote %.2f GB/s, rms residual %.2f%%)\n",
                    c.fit.alpha_us, c.nvls_fill_rounds, c.fit.beta_GBps, c.nvls_head_cost_us, c.busbw_asymptote_GBps, c.fit.rms_relative * 100);
      out += format("  (a round: %.0f channels x the ranks x NCCL's NVLS chunk, or the size when smaller; the kernel's pipeline fill;\n"
                    "   visits: a channel's rounds x the ranks, each round's scatter and gather going to every head in turn)\n",
                    static_cast<double>(c.nvls_channels));
    } else {
      out += format("  fit  time = %.3f us + size / %.3f GB/s   (busbw asymptote %.2f GB/s, rms residual %.2f%%)\n",
                    c.fit.alpha_us, c.fit.beta_GBps, c.busbw_asymptote_GBps, c.fit.rms_relative * 100);
    }
    out += "  size             measured_us    fitted_us   residual\n";
    for (std::size_t i = 0, k = 0; i < c.log.samples.size(); ++i) {
      const auto& s = c.log.samples[i];
      if (s.bytes <= 0 || s.time_us <= 0) continue;
      char row[160];
      std::snprintf(row, sizeof row, "  %-14lld %12.2f %12.2f %+9.2f%%\n", static_cast<long long>(s.bytes), s.time_us,
                    s.time_us - c.fit.residuals_us[k], c.fit.relative_residuals[k] * 100);
      out += row;
      ++k;
    }
    CollectiveFitRecord f;
    f.log = path;
    f.op = op_name(request.op);
    f.ranks = c.ranks;
    f.alpha_us = c.fit.alpha_us;
    f.beta_GBps = c.fit.beta_GBps;
    f.busbw_asymptote_GBps = c.busbw_asymptote_GBps;
    f.rms_relative_residual = c.fit.rms_relative;
    f.relative_residuals = c.fit.relative_residuals;
    r.profile.fits.push_back(f);
    if (c.p2p) {
      r.profile.p2p = c.p2p_kernel;
      out += "  -> p2p: NCCL's p2p kernel, as fitted\n";
      r.collectives.push_back(c);
      continue;
    }
    (c.nvls ? r.profile.nvls : c.inter_node ? r.profile.nic : r.profile.nvlink) = c.link;
    if (c.nvls) {
      r.profile.nvls_fill_rounds = c.nvls_fill_rounds;
      r.profile.nvls_head_cost = from_us(c.nvls_head_cost_us);
    }
    out += format(c.nvls         ? "  -> nvls: %.2f GB/s switch-layer reduction rate (AllReduce algbw), %.3f us start-up, the fill's rounds and the visits' cost as fitted\n"
                  : c.inter_node ? "  -> nic: %.2f GB/s per NIC, %.3f us per link\n"
                                 : "  -> nvlink: %.2f GB/s per GPU, %.3f us per hop\n",
                  static_cast<double>(c.link.bandwidth.bits_per_second) / 8e9, static_cast<double>(c.link.latency) * 1e-6);
    r.collectives.push_back(c);
  }
  for (const auto& path : request.perftest_logs) apply_perftest(load_perftest(path), path, r.profile, out);
  return r;
}

}  // namespace fabricsim

namespace fabricsim {

namespace {
double median_of(std::vector<double> v) { return summarize(std::move(v)).median; }
}  // namespace

LinkProfile gpu_profile(const GpuProbeReport& g) {
  LinkProfile p;
  p.sources.push_back("fabricsim calibrate gpu: " + std::to_string(g.devices.size()) + " x " +
                      (g.devices.empty() ? std::string("?") : g.devices[0].name) + ", " + g.driver);
  if (g.devices.empty()) return p;
  std::vector<double> fp32, bf16, tflops, launch, pcie, peer_bw, peer_lat;
  for (const auto& d : g.devices) {
    fp32.push_back(d.reduce_fp32_GBps.median), bf16.push_back(d.reduce_bf16_GBps.median);
    tflops.push_back(d.matmul_tflops.median), launch.push_back(d.launch_us.median);
    pcie.push_back(std::min(d.h2d_GBps.median, d.d2h_GBps.median));
  }
  for (const auto& pr : g.peers) {
    if (!pr.peer_access) continue;
    peer_bw.push_back(pr.bandwidth_GBps.median);
    peer_lat.push_back(pr.latency_us.median);
  }
  p.reduce_GBps_fp32 = median_of(fp32);
  p.reduce_GBps_bf16 = median_of(bf16);
  p.matmul_tflops = median_of(tflops);
  p.launch_latency_us = median_of(launch);
  // A NIC reads the GPU's memory and writes into it over the GPU's PCIe link: each way at
  // the slower of the two copies.
  LinkSpec link;
  link.bandwidth = Bandwidth{static_cast<std::int64_t>(median_of(pcie) * 8e9)};
  p.pcie = link;
  p.pcie_latency_given = false;
  if (!peer_bw.empty()) {
    LinkSpec nvlink;
    nvlink.bandwidth = Bandwidth{static_cast<std::int64_t>(median_of(peer_bw) * 8e9)};
    // A remote load goes GPU -> switch -> GPU and its data comes back the same way: four hops.
    nvlink.latency = static_cast<Time>(median_of(peer_lat) / 4 * 1e6);
    p.nvlink = nvlink;
  }
  return p;
}

}  // namespace fabricsim
