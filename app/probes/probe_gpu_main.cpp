// fabricsim-probe-gpu: the measuring half of `fabricsim calibrate gpu`, which runs
// this executable; kept apart so the simulator itself never links the CUDA libraries.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "app/studies/calibration.h"
#include "app/output/json_writer.h"
#include "app/probes/probe_cli.h"
#include "app/config/profile.h"
#include "app/output/results.h"
#include "calibrate/gpu_probe.h"
#include "calibrate/probe_stats.h"

namespace po = boost::program_options;
using namespace fabricsim;

namespace {

std::string stat_text(const ProbeStat& s, const char* fmt) {
  char buf[160];
  std::snprintf(buf, sizeof buf, fmt, s.median);
  std::string out = buf;
  std::snprintf(buf, sizeof buf, "  [%.4g..%.4g, spread %.1f%%, n=%d]", s.min, s.max, s.spread() * 100, s.repetitions);
  return out + buf;
}

void json_stat(JsonWriter& j, const char* key, const ProbeStat& s) {
  j.key(key).begin_object();
  j.key("median").value(s.median);
  j.key("min").value(s.min);
  j.key("max").value(s.max);
  j.key("repetitions").value(static_cast<std::uint64_t>(s.repetitions));
  j.end_object();
}

int probe_gpu(const po::variables_map& vm) {
  const GpuProbeResult r = run_gpu_probe(GpuProbeOptions{}, probe_progress);
  end_progress();
  if (r.outcome != GpuProbeResult::Outcome::kMeasured) {
    std::cerr << "fabricsim calibrate gpu: " << r.message << "\n";
    return kExitNoDevice;
  }
  const GpuProbeReport& g = r.report;
  const LinkProfile p = gpu_profile(g);
  if (vm.count("json")) {
    JsonWriter j;
    j.begin_object();
    j.key("driver").value(g.driver);
    j.key("devices").begin_array();
    for (const auto& d : g.devices) {
      j.begin_object();
      j.key("index").value(static_cast<std::uint64_t>(d.index));
      j.key("name").value(d.name);
      json_stat(j, "d2d_GBps", d.d2d_GBps);
      json_stat(j, "h2d_GBps", d.h2d_GBps);
      json_stat(j, "d2h_GBps", d.d2h_GBps);
      json_stat(j, "launch_us", d.launch_us);
      json_stat(j, "reduce_fp32_GBps", d.reduce_fp32_GBps);
      json_stat(j, "reduce_bf16_GBps", d.reduce_bf16_GBps);
      json_stat(j, "matmul_bf16_tflops", d.matmul_tflops);
      j.end_object();
    }
    j.end_array();
    j.key("peers").begin_array();
    for (const auto& pr : g.peers) {
      j.begin_object();
      j.key("src").value(static_cast<std::uint64_t>(pr.src));
      j.key("dst").value(static_cast<std::uint64_t>(pr.dst));
      j.key("peer_access").value(pr.peer_access);
      json_stat(j, "bandwidth_GBps", pr.bandwidth_GBps);
      if (pr.peer_access) json_stat(j, "latency_us", pr.latency_us);
      j.end_object();
    }
    j.end_array();
    j.end_object();
    std::cout << j.str();
  } else {
    std::cout << "fabricsim calibrate gpu: " << g.devices.size() << " GPU(s), " << g.driver
              << "; medians over repetitions after warm-up, [min..max]\n";
    for (const auto& d : g.devices) {
      std::cout << "gpu " << d.index << ": " << d.name << "\n"
                << "  d2d copy      " << stat_text(d.d2d_GBps, "%8.1f GB/s") << "  (read + write)\n"
                << "  h2d pinned    " << stat_text(d.h2d_GBps, "%8.1f GB/s") << "\n"
                << "  d2h pinned    " << stat_text(d.d2h_GBps, "%8.1f GB/s") << "\n"
                << "  launch        " << stat_text(d.launch_us, "%8.2f us  ") << "\n"
                << "  reduce fp32   " << stat_text(d.reduce_fp32_GBps, "%8.1f GB/s") << "  (one operand's bytes)\n"
                << "  reduce bf16   " << stat_text(d.reduce_bf16_GBps, "%8.1f GB/s") << "\n"
                << "  matmul bf16   " << stat_text(d.matmul_tflops, "%8.1f TFLOP/s") << "\n";
    }
    for (const auto& pr : g.peers) {
      std::cout << "peer " << pr.src << " -> " << pr.dst << (pr.peer_access ? "  " : "  (no peer access, staged)  ")
                << stat_text(pr.bandwidth_GBps, "%8.1f GB/s");
      if (pr.peer_access) std::cout << "   load latency " << stat_text(pr.latency_us, "%.3f us");
      std::cout << "\n";
    }
  }
  if (vm.count("out")) {
    write_file_atomically(vm["out"].as<std::string>(), profile_yaml(p));
    std::cerr << "profile written to " << vm["out"].as<std::string>() << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description options("fabricsim calibrate gpu options");
  options.add_options()
      ("json", "print one JSON object")
      ("out,o", po::value<std::string>()->value_name("PROFILE.yaml"), "write a link profile");
  return probe_main(argc, argv, "gpu", options, probe_gpu);
}
