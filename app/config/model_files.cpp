#include "app/config/model_files.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/config/profile.h"
#include "app/config/yaml_reader.h"
#include "app/config/yaml_safety.h"

namespace fabricsim {
namespace {
YAML::Node load_yaml(const std::string& path) { return read_yaml_file(path); }
}  // namespace

ModelSpec load_model_file(const std::string& path) {
  YamlContext ctx(path);
  MapReader m(ctx, load_yaml(path), "");
  ModelSpec s;
  s.name = m.string("name", std::filesystem::path(path).stem().string());
  s.layers = static_cast<int>(m.integer("layers", 1, 10000));
  s.hidden = m.integer("hidden", 1, 1 << 20);
  s.heads = static_cast<int>(m.integer("heads", 1, 4096));
  s.ffn_hidden = m.integer("ffn_hidden", 0, 1 << 22, 0);
  s.seq_len = m.integer("seq_len", 1, 1 << 24);
  s.micro_batch = m.integer("micro_batch", 1, 1 << 16, 1);
  s.vocab = m.integer("vocab", 1, 1 << 24);
  s.dtype_bytes = static_cast<int>(m.integer("dtype_bytes", 1, 8, 2));
  s.grad_bytes = static_cast<int>(m.integer("grad_bytes", 1, 8, 2));
  if (m.has("moe")) {
    MapReader moe = m.map("moe");
    s.experts = static_cast<int>(moe.integer("experts", 1, 1 << 16));
    s.top_k = static_cast<int>(moe.integer("top_k", 1, 64, 2));
    s.moe_every = static_cast<int>(moe.integer("every", 1, 1000, 1));
    moe.finish();
  } else {
    m.map("moe", false);
  }
  m.finish();
  return s;
}

GpuProfile load_gpu_profile(const std::string& path) {
  YamlContext ctx(path);
  MapReader m(ctx, load_yaml(path), "");
  GpuProfile g;
  g.name = m.string("name", std::filesystem::path(path).stem().string());
  if (m.has("version") && m.has("gpu")) {
    // A calibration profile (calibrate gpu): its measured bf16 GEMM rate.
    const LinkProfile profile = load_profile(path);
    if (!profile.matmul_tflops) m.context().fail(m.node()["gpu"], "gpu", "expected gpu.matmul_tflops in the profile");
    g.achieved_tflops = *profile.matmul_tflops;
    return g;
  }
  m.real("peak_tflops", 0, 1e6, 0);  // documentation only
  if (m.has("kernels")) {
    // The kernel model: GEMMs by shape, memory-bound kernels by bytes (gpu_kernels.h).
    MapReader k = m.map("kernels");
    g.matmul_tflops = k.real("matmul_tflops", 0.001, 1e6);
    g.memory_gbps = k.real("memory_gbps", 0.001, 1e7);
    g.sms = static_cast<int>(k.integer("sms", 1, 1 << 16));
    g.tile_m = static_cast<int>(k.integer("tile_m", 1, 1 << 12, g.tile_m));
    g.tile_n = static_cast<int>(k.integer("tile_n", 1, 1 << 12, g.tile_n));
    k.finish();
    m.real("achieved_tflops", 0.001, 1e6, g.achieved_tflops);  // unused with the kernel model
  } else {
    m.map("kernels", false);
    g.achieved_tflops = m.real("achieved_tflops", 0.001, 1e6);
  }
  m.finish();
  return g;
}

}  // namespace fabricsim
