#pragma once
// A scale-up NVLink domain: `gpus` GPUs and `switches` NVSwitch chips. GPU g has
// links_per_switch[c] NVLinks to chip c, modelled as one trunk of that many links'
// bandwidth (NVLink stripes a transfer over the links of a trunk). A GPU's bandwidth
// into the switch layer is the sum over chips. Presets: docs/topologies.md gives the
// source of every figure.
#include <optional>
#include <string>
#include <vector>

#include "topologies/topology.h"

namespace fabricsim {

// NCCL's point-to-point kernel on these GPUs (ncclSend/ncclRecv, as AllToAll runs them;
// workloads/collectives/nccl_p2p.h), per channel (thread block): what its copies move while
// it serves one send (Simple; LL in payload bytes), the fixed cost of one batch of works
// per protocol, the receiver's copy of its last Simple step out of NCCL's buffer, and the
// kernel's launch. The defaults are fitted from one GB300 compute tray's AllToAll
// (configs/validation/tables/gb300-4gpu-1node-alltoall.txt, calibrate import) with the
// launch that `calibrate gpu` measured on an H200; other GPUs keep them until calibrated.
struct P2pKernelSpec {
  double channel_GBps = 20.832;
  double ll_channel_GBps = 5.291;
  Time batch_latency = ns(11624);
  Time ll_batch_latency = ns(7325);
  double drain_GBps = 82.27;
  Time launch_latency = ns(3800);
};

struct NvSwitchSpec {
  int gpus = 8;
  int switches = 4;
  std::vector<int> links_per_switch{5, 4, 4, 5};  // per GPU, to each chip
  Bandwidth nvlink_bandwidth = Bandwidth::gBps(25);  // one NVLink, per direction
  // The share of an NVLink's signalling rate that carries data: packet headers, CRC and
  // flow-control credits take the rest. 1: the bandwidth above is already a data rate.
  double nvlink_data_fraction = 1.0;
  Time latency = ns(250);  // per GPU-to-switch hop; a placeholder until calibrated
  // NVLink SHARP (NVLS): the switch layer's reduction rate, as the algorithm bandwidth of
  // an AllReduce it serves (each chip reduces its share of the stripe at its share of
  // this), and the fixed start-up cost of an NVLS collective. 0: the chips do not reduce.
  Bandwidth nvls_bandwidth{0};
  Time nvls_latency = 0;
  // NCCL's NVLS kernel's pipeline fill, in rounds of its chunks through the switch
  // (nvls_pipeline_fill_ps): at least 2, its AllReduce's three stages less one; a
  // calibrated profile fits it.
  double nvls_fill_rounds = 2;
  // Its cost per visit to a head, beyond the bytes (nvls_head_visits_ps): each round a
  // channel's scatter and gather copy a chunk to or from every head in turn. 0 unless a
  // calibrated profile fits it.
  Time nvls_head_cost = 0;
  P2pKernelSpec p2p;
  // The GPUs' CUDA compute capability (80 A100, 90 H100/H200, 100 B200/GB200): NCCL's
  // tuner picks its per-generation figures by it.
  int compute_capability = 90;

  int links_per_gpu() const;
  Bandwidth gpu_bandwidth() const;  // data per direction, into the switch layer
  Bandwidth trunk_bandwidth(int links) const;  // data per direction over `links` NVLinks
};

// The preset of that name (one of nvswitch_preset_names()); nullopt for another name.
std::optional<NvSwitchSpec> nvswitch_preset(const std::string& name);
const std::vector<std::string>& nvswitch_preset_names();

// Connects `gpus` (spec.gpus of them) to new chips <prefix>nvsw<c>.
void build_nvswitch(Topology& t, const NvSwitchSpec& spec, const std::vector<std::uint32_t>& gpus,
                    const std::string& prefix = "");
// Standalone: GPUs gpu0, gpu1, ...
Topology nvswitch_topology(const NvSwitchSpec& spec);

}  // namespace fabricsim
