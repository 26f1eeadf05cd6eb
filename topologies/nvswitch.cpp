#include "topologies/nvswitch.h"

#include <cmath>
#include <numeric>
#include <stdexcept>

namespace fabricsim {

int NvSwitchSpec::links_per_gpu() const { return std::accumulate(links_per_switch.begin(), links_per_switch.end(), 0); }

Bandwidth NvSwitchSpec::trunk_bandwidth(int links) const {
  return Bandwidth{static_cast<std::int64_t>(std::llround(static_cast<double>(nvlink_bandwidth.bits_per_second) * links * nvlink_data_fraction))};
}

Bandwidth NvSwitchSpec::gpu_bandwidth() const { return trunk_bandwidth(links_per_gpu()); }

std::optional<NvSwitchSpec> nvswitch_preset(const std::string& name) {
  NvSwitchSpec s;
  if (name == "dgx_h100") {
    // H100 SXM: 18 NVLink4 links of 25 GB/s per direction (900 GB/s bidirectional);
    // DGX H100: 4 third-generation NVSwitch chips, reached over 5, 4, 4 and 5 links.
    s.gpus = 8;
    s.switches = 4;
    s.links_per_switch = {5, 4, 4, 5};
    s.nvlink_bandwidth = Bandwidth::gBps(25);
    // 20.6 GB/s of data per link (NCCL's SM90_NVLINK_BW, src/graph/topo.h): 370.8 GB/s a
    // GPU, the "~20% protocol overhead" NCCL's maintainers quote (NVIDIA/nccl-tests #212).
    s.nvlink_data_fraction = 20.6 / 25.0;
    // NVLS: about 476 GB/s busbw is what NVIDIA's nccl-tests maintainer calls expected
    // for an 8 x H100 AllReduce (NVIDIA/nccl-tests issue 290), an algorithm bandwidth of
    // 476 x 8 / 14 = 272 GB/s; no start-up cost until calibrated.
    s.nvls_bandwidth = Bandwidth::gBps(272);
    s.compute_capability = 90;
    return s;
  }
  if (name == "dgx_a100") {
    // A100 SXM: 12 NVLink3 links of 25 GB/s per direction (600 GB/s bidirectional);
    // DGX A100: 6 second-generation NVSwitch chips, 2 links to each.
    s.gpus = 8;
    s.switches = 6;
    s.links_per_switch = std::vector<int>(6, 2);
    s.nvlink_bandwidth = Bandwidth::gBps(25);
    s.nvlink_data_fraction = 20.0 / 25.0;  // NCCL's SM80_NVLINK_BW: 20 GB/s of data per link
    s.compute_capability = 80;
    return s;
  }
  if (name == "gb200_nvl72") {
    // B200: 18 NVLink5 links of 50 GB/s per direction (1.8 TB/s bidirectional); the
    // NVL72 rack: 72 GPUs, 9 switch trays of 2 NVSwitch chips, one link to each chip.
    s.gpus = 72;
    s.switches = 18;
    s.links_per_switch = std::vector<int>(18, 1);
    s.nvlink_bandwidth = Bandwidth::gBps(50);
    s.nvlink_data_fraction = 40.1 / 50.0;  // NCCL's SM100_NVLINK_BW: 40.1 GB/s of data per link
    s.compute_capability = 100;
    return s;
  }
  if (name == "dgx_b200") {
    // B200's 18 NVLink5 links as in gb200_nvl72; DGX B200 and HGX B200: 8 GPUs on 2
    // fifth-generation NVSwitch chips, 9 links to each (NVIDIA DGX B200 datasheet:
    // 1.8 TB/s of GPU-to-GPU bandwidth, 2 NVLink switch chips).
    s.gpus = 8;
    s.switches = 2;
    s.links_per_switch = {9, 9};
    s.nvlink_bandwidth = Bandwidth::gBps(50);
    s.nvlink_data_fraction = 40.1 / 50.0;  // NCCL's SM100_NVLINK_BW
    s.compute_capability = 100;
    return s;
  }
  return std::nullopt;
}

const std::vector<std::string>& nvswitch_preset_names() {
  static const std::vector<std::string> names{"dgx_h100", "dgx_a100", "gb200_nvl72", "dgx_b200"};
  return names;
}

void build_nvswitch(Topology& t, const NvSwitchSpec& spec, const std::vector<std::uint32_t>& gpus,
                    const std::string& prefix) {
  if (spec.switches < 1 || spec.links_per_switch.size() != static_cast<std::size_t>(spec.switches)) {
    throw std::invalid_argument("links_per_switch needs one entry per NVSwitch chip");
  }
  if (gpus.size() != static_cast<std::size_t>(spec.gpus)) throw std::invalid_argument("wrong number of GPUs for the domain");
  std::vector<std::uint32_t> chips;
  for (int c = 0; c < spec.switches; ++c) {
    chips.push_back(t.add_switch(prefix + "nvsw" + std::to_string(c), "nvswitch"));
    if (spec.nvls_bandwidth.bits_per_second > 0 && spec.links_per_gpu() > 0) {
      // GPUs stripe in-network traffic over their links, so each chip reduces its links'
      // share of every sum.
      const std::int64_t share = spec.nvls_bandwidth.bits_per_second * spec.links_per_switch[static_cast<std::size_t>(c)] / spec.links_per_gpu();
      if (share > 0) t.set_reduce_rate(chips.back(), Bandwidth{share});
    }
  }
  for (std::uint32_t gpu : gpus) {
    for (int c = 0; c < spec.switches; ++c) {
      const int links = spec.links_per_switch[static_cast<std::size_t>(c)];
      if (links <= 0) continue;
      t.connect(gpu, chips[static_cast<std::size_t>(c)], LinkSpec{spec.trunk_bandwidth(links), spec.latency, FlowControl::kCredit, 0},
                "nvlink");
    }
  }
}

Topology nvswitch_topology(const NvSwitchSpec& spec) {
  Topology t;
  const auto gpus = add_hosts(t, spec.gpus, "gpu", "gpu");
  build_nvswitch(t, spec, gpus);
  return t;
}

}  // namespace fabricsim
