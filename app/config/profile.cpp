#include "app/config/profile.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/config/yaml_reader.h"
#include "app/config/yaml_safety.h"

namespace fabricsim {

P2pKernelSpec read_p2p_kernel(MapReader& m, const P2pKernelSpec& base) {
  const auto GBps = [&](const char* key, double fallback) {
    return static_cast<double>(m.bandwidth(key, Bandwidth{static_cast<std::int64_t>(fallback * 8e9)}).bits_per_second) / 8e9;
  };
  P2pKernelSpec k = base;
  k.channel_GBps = GBps("bandwidth", base.channel_GBps);
  k.ll_channel_GBps = GBps("ll_bandwidth", base.ll_channel_GBps);
  k.batch_latency = m.time("latency", base.batch_latency);
  k.ll_batch_latency = m.time("ll_latency", base.ll_batch_latency);
  k.drain_GBps = GBps("drain_bandwidth", base.drain_GBps);
  k.launch_latency = m.time("launch", base.launch_latency);
  m.finish();
  if (k.channel_GBps <= 0 || k.ll_channel_GBps <= 0 || k.drain_GBps <= 0) {
    m.context().fail(m.node(), m.path(), "expected bandwidth, ll_bandwidth and drain_bandwidth above 0");
  }
  return k;
}

Time read_nvls_head_cost(MapReader& m, Time fallback) {
  const Time cost = m.time("head_cost", fallback);
  if (cost > ms(1)) {
    m.context().fail(m.node()["head_cost"], m.child_path("head_cost"), "expected at most 1ms (a visit to a head costs about a microsecond)");
  }
  return cost;
}

LinkProfile load_profile(const std::string& path) {
  const YAML::Node root = read_yaml_file(path);
  YamlContext ctx(path);
  MapReader m(ctx, root, "");
  LinkProfile p;
  m.integer("version", 1, 1, 1);
  p.sources = m.string_list("sources", false);
  for (const char* key : {"nvlink", "pcie", "nic", "nvls"}) {
    if (!m.has(key)) {
      m.map(key, false);
      continue;
    }
    MapReader l = m.map(key);
    LinkSpec s;
    s.bandwidth = l.bandwidth("bandwidth");
    const std::string k = key;
    if (k == "pcie" && !l.has("latency")) p.pcie_latency_given = false;
    s.latency = l.time("latency", s.latency);
    if (k == "nvls" && l.has("fill_rounds")) p.nvls_fill_rounds = l.real("fill_rounds", 0, 1e6);
    if (k == "nvls" && l.has("head_cost")) p.nvls_head_cost = read_nvls_head_cost(l, 0);
    l.finish();
    (k == "nvlink" ? p.nvlink : k == "pcie" ? p.pcie : k == "nic" ? p.nic : p.nvls) = s;
  }
  if (m.has("p2p")) {
    MapReader k = m.map("p2p");
    p.p2p = read_p2p_kernel(k, P2pKernelSpec{});
  } else {
    m.map("p2p", false);
  }
  MapReader gpu = m.map("gpu", false);
  if (gpu.has("reduce_fp32")) p.reduce_GBps_fp32 = static_cast<double>(gpu.bandwidth("reduce_fp32").bits_per_second) / 8e9;
  if (gpu.has("reduce_bf16")) p.reduce_GBps_bf16 = static_cast<double>(gpu.bandwidth("reduce_bf16").bits_per_second) / 8e9;
  if (gpu.has("matmul_tflops")) p.matmul_tflops = gpu.real("matmul_tflops", 0, 1e6);
  if (gpu.has("launch_latency")) p.launch_latency_us = to_us(gpu.time("launch_latency"));
  for (const char* k : {"reduce_fp32", "reduce_bf16", "matmul_tflops", "launch_latency"}) {
    if (!gpu.has(k)) gpu.string(k, std::string());
  }
  gpu.finish();
  const YAML::Node fits = m.sequence("fits", false);
  for (std::size_t i = 0; i < fits.size(); ++i) {
    MapReader f(ctx, fits[i], "fits[" + std::to_string(i) + "]");
    CollectiveFitRecord r;
    r.log = f.string("log", std::string("?"));
    r.op = f.string("op", std::string("all_reduce"));
    r.ranks = static_cast<int>(f.integer("ranks", 0, 1 << 20, 0));
    r.alpha_us = f.real("alpha_us", -1e12, 1e12);
    r.beta_GBps = f.real("beta_GBps", 0, 1e12);
    r.busbw_asymptote_GBps = f.real("busbw_asymptote_GBps", 0, 1e12, 0);
    r.rms_relative_residual = f.real("rms_relative_residual", 0, 1e6, 0);
    f.sequence("relative_residuals", false);
    f.finish();
    p.fits.push_back(r);
  }
  m.finish();
  return p;
}

std::string profile_yaml(const LinkProfile& p) {
  std::ostringstream out;
  char buf[512];
  out << "# fabricsim link profile (docs/calibration.md). Reference it from a topology with\n"
         "# `profile: FILE`; its figures replace the preset's.\n";
  out << "version: 1\n";
  if (!p.sources.empty()) {
    out << "sources:\n";
    for (const auto& s : p.sources) out << "  - \"" << s << "\"\n";
  }
  const auto link = [&](const char* name, const std::optional<LinkSpec>& l, const char* comment) {
    if (!l) return;
    std::snprintf(buf, sizeof buf, "%s: {bandwidth: %.3fGBps, latency: %.3fns}  # %s\n", name,
                  static_cast<double>(l->bandwidth.bits_per_second) / 8e9, static_cast<double>(l->latency) * 1e-3, comment);
    out << buf;
  };
  link("nvlink", p.nvlink, "per GPU into the NVSwitch layer, per hop");
  if (p.pcie && !p.pcie_latency_given) {
    std::snprintf(buf, sizeof buf, "pcie: {bandwidth: %.3fGBps}  # GPU to NIC: the slower of pinned host-to-GPU and GPU-to-host copies; latency not measured\n",
                  static_cast<double>(p.pcie->bandwidth.bits_per_second) / 8e9);
    out << buf;
  } else {
    link("pcie", p.pcie, "GPU to NIC");
  }
  link("nic", p.nic, "NIC to the fabric");
  if (p.nvls && p.nvls_fill_rounds) {
    std::snprintf(buf, sizeof buf,
                  "nvls: {bandwidth: %.3fGBps, latency: %.3fns, fill_rounds: %.4f, head_cost: %.1fns}  # NVLink SHARP: the switch "
                  "layer's reduction rate (AllReduce algbw), an NVLS collective's start-up cost, its kernel's pipeline fill in rounds "
                  "of chunks and its cost per visit to a head\n",
                  static_cast<double>(p.nvls->bandwidth.bits_per_second) / 8e9, static_cast<double>(p.nvls->latency) * 1e-3,
                  *p.nvls_fill_rounds, static_cast<double>(p.nvls_head_cost.value_or(0)) * 1e-3);
    out << buf;
  } else {
    link("nvls", p.nvls, "NVLink SHARP: the switch layer's reduction rate (AllReduce algbw), an NVLS collective's start-up cost");
  }
  if (p.p2p) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "p2p: {bandwidth: %.3fGBps, ll_bandwidth: %.3fGBps, latency: %.1fns, ll_latency: %.1fns, drain_bandwidth: %.3fGBps, "
                  "launch: %.1fns}  # NCCL's p2p kernel (AllToAll), per channel: Simple's and LL's rate, a batch's fixed cost each, "
                  "the last step's drain, the launch\n",
                  p.p2p->channel_GBps, p.p2p->ll_channel_GBps, static_cast<double>(p.p2p->batch_latency) * 1e-3,
                  static_cast<double>(p.p2p->ll_batch_latency) * 1e-3, p.p2p->drain_GBps, static_cast<double>(p.p2p->launch_latency) * 1e-3);
    out << line;
  }
  if (p.reduce_GBps_fp32 || p.reduce_GBps_bf16 || p.matmul_tflops || p.launch_latency_us) {
    out << "gpu:\n";
    if (p.reduce_GBps_fp32) { std::snprintf(buf, sizeof buf, "  reduce_fp32: %.3fGBps\n", *p.reduce_GBps_fp32); out << buf; }
    if (p.reduce_GBps_bf16) { std::snprintf(buf, sizeof buf, "  reduce_bf16: %.3fGBps\n", *p.reduce_GBps_bf16); out << buf; }
    if (p.matmul_tflops) { std::snprintf(buf, sizeof buf, "  matmul_tflops: %.3f\n", *p.matmul_tflops); out << buf; }
    if (p.launch_latency_us) { std::snprintf(buf, sizeof buf, "  launch_latency: %.3fus\n", *p.launch_latency_us); out << buf; }
  }
  if (!p.fits.empty()) {
    out << "fits:\n";
    for (const auto& f : p.fits) {
      std::snprintf(buf, sizeof buf,
                    "  - {log: \"%s\", op: %s, ranks: %d, alpha_us: %.4f, beta_GBps: %.4f, busbw_asymptote_GBps: %.4f, rms_relative_residual: %.6f",
                    f.log.c_str(), f.op.c_str(), f.ranks, f.alpha_us, f.beta_GBps, f.busbw_asymptote_GBps, f.rms_relative_residual);
      out << buf << ", relative_residuals: [";
      for (std::size_t i = 0; i < f.relative_residuals.size(); ++i) {
        std::snprintf(buf, sizeof buf, "%s%.5f", i ? ", " : "", f.relative_residuals[i]);
        out << buf;
      }
      out << "]}\n";
    }
  }
  return out.str();
}

LinkProfile load_profile_key(MapReader& m) {
  const std::string file = resolve_config_path(m.context(), m.string("profile"));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    m.context().fail(m.node()["profile"], m.child_path("profile"),
                     "cannot read '" + file + "'; expected a profile file (calibrate import writes one)");
  }
  return load_profile(file);
}

}  // namespace fabricsim
