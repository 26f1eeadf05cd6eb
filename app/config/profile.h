#pragma once
// Link profiles (docs/calibration.md): measured or fitted figures that a topology can
// reference with `profile: FILE`, overriding its preset figures. Written by
// `fabricsim calibrate import` (and the probes), read like configs with located errors.
#include <optional>
#include <string>
#include <vector>

#include "topologies/link_spec.h"
#include "topologies/nvswitch.h"

namespace fabricsim {

struct CollectiveFitRecord {
  std::string log;
  std::string op;
  int ranks = 0;
  double alpha_us = 0;
  double beta_GBps = 0;
  double busbw_asymptote_GBps = 0;
  double rms_relative_residual = 0;
  std::vector<double> relative_residuals;
};

struct LinkProfile {
  std::optional<LinkSpec> nvlink;  // per GPU into the NVSwitch layer (all its links together), per hop
  std::optional<LinkSpec> pcie;
  bool pcie_latency_given = true;  // false: the profile measured PCIe's bandwidth only (the GPU probe)
  std::optional<LinkSpec> nic;
  // NVLink SHARP: the switch layer's reduction rate (as an AllReduce's algorithm
  // bandwidth) and an NVLS collective's start-up cost.
  std::optional<LinkSpec> nvls;
  // The NVLS kernel's pipeline fill, in rounds of its chunks (nvls_pipeline_fill_ps).
  std::optional<double> nvls_fill_rounds;
  // And its cost per visit to a head (nvls_head_visits_ps).
  std::optional<Time> nvls_head_cost;
  // NCCL's p2p kernel (AllToAll), fitted from one node's AllToAll.
  std::optional<P2pKernelSpec> p2p;
  std::optional<double> reduce_GBps_fp32, reduce_GBps_bf16, matmul_tflops, launch_latency_us;
  std::vector<CollectiveFitRecord> fits;
  std::vector<std::string> sources;
};

LinkProfile load_profile(const std::string& path);
class MapReader;
// The profile a config's `profile:` key names (resolved against the config's folder); a
// file that cannot be read is an error at that key.
LinkProfile load_profile_key(MapReader& m);
std::string profile_yaml(const LinkProfile& profile);
// `p2p: {bandwidth, ll_bandwidth, latency, ll_latency, drain_bandwidth, launch}` (profiles
// and NVSwitch topologies): each key missing keeps `base`'s.
P2pKernelSpec read_p2p_kernel(MapReader& m, const P2pKernelSpec& base);
// An NVLS entry's `head_cost` (NvSwitchSpec::nvls_head_cost), at most 1 ms.
Time read_nvls_head_cost(MapReader& m, Time fallback);

}  // namespace fabricsim
