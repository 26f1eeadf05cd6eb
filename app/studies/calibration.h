#pragma once
// `fabricsim calibrate import`: fit measurement logs and translate them into a link
// profile (docs/calibration.md).
#include <string>
#include <vector>

#include "app/config/profile.h"
#include "calibrate/gpu_probe.h"
#include "calibrate/fit.h"
#include "calibrate/log_import.h"
#include "workloads/collectives/collective.h"
#include "workloads/collectives/nccl_tuning.h"

namespace fabricsim {

struct ImportRequest {
  std::vector<std::string> nccl_tests_logs;
  std::vector<std::string> perftest_logs;
  CollectiveOp op = CollectiveOp::kAllReduce;
  int ranks = 0;          // 0: the log's "Rank" lines must say
  int gpus_per_node = 0;  // 0: every rank in one NVSwitch node
  int nics_per_node = 0;  // 0: one NIC per GPU
  // The algorithm the log ran: "ring", "nvls", or empty: NVLS if the log says so, else ring.
  std::string algorithm;
  // NVLS logs: the GPUs' compute capability and the NCCL line whose rules set the NVLS
  // kernels' channels and chunks (the rounds of the pipeline's fill) and NCCL's latency.
  int compute_capability = 90;
  std::string nccl_version = kDefaultNcclVersion;
  // AllToAll logs: NCCL's p2p channels, each peer's most too (its INFO line "N p2p
  // channels, N p2p channels per peer"; 32 on GPUs of 18 NVLinks).
  int p2p_channels = 32;
};

// One nccl-tests log, fitted and translated.
struct CollectiveCalibration {
  NcclTestsLog log;
  int ranks = 0;
  AlphaBetaFit fit;
  double busbw_asymptote_GBps = 0;  // beta times the busbw factor
  bool inter_node = false;          // the NICs, not NVLink, bound the busbw
  bool nvls = false;                // an NVLS log: `link` is the profile's nvls entry
  int nvls_channels = 0;            // NVLS: the channels NCCL's kernels ran
  double nvls_fill_rounds = 0;      // NVLS: the kernel's pipeline fill, fitted (nvls_pipeline_fill_ps)
  double nvls_head_cost_us = 0;     // and its cost per visit to a head, fitted (nvls_head_visits_ps)
  bool p2p = false;                 // an AllToAll log: `p2p_kernel` is the profile's p2p entry
  P2pKernelSpec p2p_kernel;
  LinkSpec link;                    // what the profile gets: nvlink, nic when inter_node, or nvls
};

CollectiveCalibration calibrate_collective(const NcclTestsLog& log, const ImportRequest& request);

// Every log in the request into one profile; `report` is the human-readable account
// (fits, residuals, translation) the command prints.
struct ImportResult {
  LinkProfile profile;
  std::vector<CollectiveCalibration> collectives;
  std::string report;
};

// Throws std::runtime_error naming the log and line for unreadable logs, and
// std::invalid_argument for requests that cannot be translated.
ImportResult import_logs(const ImportRequest& request);

// `calibrate gpu`'s profile from the probe's figures: medians over the GPUs of the
// reduction, GEMM and launch figures; NVLink from the peer pairs with direct access (per
// GPU, a remote load's latency over its four hops); PCIe, each way, from the slower of the
// pinned copies to and from the host (bandwidth only: the probe times no PCIe latency).
LinkProfile gpu_profile(const GpuProbeReport& report);

// A perftest table into the profile's NIC entry: a bandwidth table's fit sets the
// bandwidth (and records the per-message overhead), a latency table the per-link latency.
void apply_perftest(const PerftestLog& log, const std::string& source, LinkProfile& profile, std::string& report);

// Ring steps a collective of `ranks` takes: all_reduce 2(n-1), reduce_scatter and
// all_gather n-1, the rest n-1 as well (pipelined chains), all_to_all 1.
int latency_steps(CollectiveOp op, int ranks);

}  // namespace fabricsim
