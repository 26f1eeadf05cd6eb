#include "workloads/collectives/nccl_tuning.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace fabricsim {

namespace {

constexpr int kTree = 0, kRing = 1, kCollNet = 2, kNvls = 3, kNvlsTree = 4;
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr int kNvlinkHw = 0, kPcieHw = 1, kNetHw = 2;

int generation(int compute_capability) {
  return compute_capability >= 100 ? 3 : compute_capability >= 90 ? 2 : compute_capability >= 80 ? 1 : 0;
}
int node_class(int nodes) { return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2; }  // NCCL's N1 / N2 / N4

// The tables of NVIDIA/nccl src/graph/tuning.cc at each line's release tag (v2.18.5-1,
// v2.19.3-1, v2.21.5-1, v2.24.3-1, v2.25.1-1, v2.27.7-1, v2.28.9-1, v2.29.7-1, v2.30.7-1),
// and the patch releases where a figure moved. Blackwell rows before 2.25 repeat Hopper's, as
// those releases index Blackwell parts as Hopper.
NcclRules rules_2_21() {
  NcclRules r;
  r.version = "2.21";
  r.base[kTree] = {6.8, 14.0, 0};
  r.base[kRing] = {6.6, 14.0, 8.4};
  r.hw[kNvlinkHw][kTree] = {.6, 1.25, 28};
  r.hw[kNvlinkHw][kRing] = {.6, 1.9, 3.4};
  r.hw[kNvlinkHw][kCollNet] = {0, 0, 3.7};
  r.hw[kNvlinkHw][kNvls] = {0, 0, 25};
  r.hw[kNvlinkHw][kNvlsTree] = {0, 0, 25};
  r.hw[kPcieHw][kTree] = {1.0, 1.9, 28};
  r.hw[kPcieHw][kRing] = {1.0, 2.5, 5.7};
  r.hw[kPcieHw][kCollNet] = {0, 0, 3.7};
  r.hw[kNetHw][kTree] = {5.0, 8.5, 28};
  r.hw[kNetHw][kRing] = {2.7, 4.0, 14.0};
  r.hw[kNetHw][kCollNet] = {0, 0, 31};
  r.hw[kNetHw][kNvls] = {0, 0, 18};
  r.hw[kNetHw][kNvlsTree] = {0, 0, 14};
  r.ll_max_bw = {{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {141.0, 45.0, 35.0}}};
  r.ring_ll128_per_channel = {{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {36.7, 36.7, 36.7}}};
  r.tree_ll128_per_channel = {{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {36.7, 36.7, 29.0}}};
  r.tree_per_channel = {{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {38.7, 41.4, 36.0}}};
  r.ring_inter_steps_per_node_pair = false;
  r.ring_ll128_one_gpu_share = 0.7;
  r.ll128_default = NcclRules::Ll128Default::kVoltaAmpereHopper;
  return r;
}

// 2.19 and 2.20: 2.21's tables but NVLS's 23 us per NVLink hop, Hopper's LL caps still
// Ampere's, and the ring's LL at a quarter of its bus bandwidth.
NcclRules rules_2_19() {
  NcclRules r = rules_2_21();
  r.version = "2.19";
  r.hw[kNvlinkHw][kNvls] = {0, 0, 23};
  r.hw[kNvlinkHw][kNvlsTree] = {0, 0, 23};
  r.ll_max_bw[2] = r.ll_max_bw[1];
  r.ll_max_bw[3] = r.ll_max_bw[1];
  r.ring_ll_quarter = true;
  return r;
}

NcclRules rules_2_18() {
  NcclRules r = rules_2_19();
  r.version = "2.18";
  r.base[kCollNet] = {6.8, 14.0, 0};
  r.base[kNvls] = {0, 0, 23.0};
  r.base[kNvlsTree] = {0, 0, 23.0};
  r.hw[kNvlinkHw][kTree] = {.6, 1.25, 4};
  r.hw[kNvlinkHw][kCollNet] = {0, 0, 8.0};
  r.hw[kNvlinkHw][kNvls] = {0, 0, 0};
  r.hw[kNvlinkHw][kNvlsTree] = {0, 0, 0};
  r.hw[kPcieHw][kTree] = {1.0, 1.9, 6};
  r.hw[kPcieHw][kCollNet] = {0, 0, 8.0};
  r.hw[kNetHw][kTree] = {5.0, 8.5, 14};
  r.hw[kNetHw][kCollNet] = {0, 0, 10.7};
  r.hw[kNetHw][kNvlsTree] = {0, 0, 19};
  r.rules_2_18 = true;
  r.collnet_arity_us = 0.5;
  return r;
}

NcclRules rules_2_27(int patch) {
  NcclRules r = rules_2_21();
  r.version = "2.27";
  r.base[kTree] = {6.8, 14.0, 8.4};
  r.hw[kNvlinkHw][kTree] = {.6, 1.25, 4.0};
  r.hw[kPcieHw][kTree] = {1.0, 1.9, 4.0};
  r.hw[kNetHw][kTree] = {5.0, 8.5, 14};
  r.ll_max_bw[3] = {2 * 141.0, 2 * 45.0, 2 * 35.0};
  r.ring_ll128_per_channel[3] = {2 * 36.7, 2 * 36.7, 2 * 36.7};
  r.tree_ll128_per_channel[3] = {2 * 36.7, 2 * 36.7, 2 * 29.0};
  r.tree_per_channel[3] = {2 * 38.7, 2 * 41.4, 2 * 36.0};
  r.ring_inter_steps_per_node_pair = true;
  r.tree_net_latency_at_one_gpu_per_node = true;
  r.ring_ll128_one_gpu_share = 0.92;
  r.blackwell_lists = patch >= 6 ? NcclBlackwellLists::k2_27_6 : patch == 5 ? NcclBlackwellLists::k2_27_5 : NcclBlackwellLists::k2_27;
  r.ll128_default = NcclRules::Ll128Default::kAll;
  return r;
}

// 2.25 and 2.26: 2.27's rules but for NVLS's kernels on Blackwell, 32 channels everywhere,
// and LL128 on by default for compute capabilities 10.0 and 12.0 of Blackwell only.
NcclRules rules_2_25() {
  NcclRules r = rules_2_27(std::numeric_limits<int>::max());
  r.version = "2.25";
  r.nvls_blackwell_domain_channels = 32;
  r.blackwell_lists = NcclBlackwellLists::k2_25;
  r.ll128_default = NcclRules::Ll128Default::kListedBlackwell;
  return r;
}

// 2.23 and 2.24: 2.27's rules, but without Blackwell: its GPUs take Hopper's rows and
// Hopper's search, and LL128 is off by default on them (v2.24.3-1).
NcclRules rules_2_23() {
  NcclRules r = rules_2_27(std::numeric_limits<int>::max());
  r.version = "2.23";
  r.ll_max_bw[3] = r.ll_max_bw[2];
  r.ring_ll128_per_channel[3] = r.ring_ll128_per_channel[2];
  r.tree_ll128_per_channel[3] = r.tree_ll128_per_channel[2];
  r.tree_per_channel[3] = r.tree_per_channel[2];
  r.blackwell_lists = NcclBlackwellLists::kNone;
  r.ll128_default = NcclRules::Ll128Default::kVoltaAmpereHopper;
  return r;
}

// 2.28: v2.28.9-1's tables. Earlier 2.28 releases differ in three figures: Blackwell's ring
// LL128 cap on two nodes (73.4 before 2.28.7, then 34.6), NVLS-tree's network step on every
// GPU (14 us before 2.28.9, then 20.9) and its Blackwell cap beyond two nodes (43.1, then 43.8).
NcclRules rules_2_28(int patch) {
  NcclRules r = rules_2_27(std::numeric_limits<int>::max());
  r.version = "2.28";
  r.hw[kNetHw][kNvlsTree] = {0, 0, patch >= 9 ? 20.9 : 14.0};
  r.ring_ll128_per_channel[3] = {2 * 36.7, patch >= 7 ? 34.6 : 2 * 36.7, 2 * 36.7};
  r.tree_ll128_per_channel[3] = {55.6, 31.67, 20.0};
  r.tree_per_channel[3] = {70.0, 42.8, 24.0};
  r.nvls_tree_per_channel = {{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, patch >= 9 ? 43.8 : 43.1}}};
  r.nvls_efficiency = {0.0, 0.0, 0.85, 0.74};
  return r;
}

// 2.29: 2.28.9's tables, the ring's LL128 caps on Blackwell lowered (34.5 / 34.6 / 34.5 GB/s
// per channel; 40 from 2.29.7), and the tree's size correction applied to NVLS-tree too on
// Blackwell hosts with x86 CPUs (ncclTopoGetAlgoTime, v2.29.2-1 and v2.29.7-1).
NcclRules rules_2_29(int patch) {
  NcclRules r = rules_2_28(9);
  r.version = "2.29";
  r.ring_ll128_per_channel[3] = patch >= 7 ? std::array<double, 3>{40.0, 40.0, 40.0} : std::array<double, 3>{34.5, 34.6, 34.5};
  r.blackwell_lists = patch >= 7 ? NcclBlackwellLists::k2_29_7 : NcclBlackwellLists::k2_29;
  r.nvls_tree_size_correction_blackwell_x86 = true;
  return r;
}

// 2.30: 2.29.7's, with NVLS-tree's per-channel cap beyond two nodes on Blackwell raised to
// 80 GB/s (v2.30.3-1 to v2.30.7-1).
NcclRules rules_2_30() {
  NcclRules r = rules_2_29(7);
  r.version = "2.30";
  r.nvls_tree_per_channel[3][2] = 80.0;
  r.blackwell_lists = NcclBlackwellLists::k2_30;
  return r;
}

// NCCL's speed lists for its graph search (src/graph/search.cc), GB/s per channel: before
// Hopper, Hopper's, and Blackwell's by release (Blackwell before 2.25: Hopper's).
std::vector<double> speeds(int cc, NcclBlackwellLists blackwell, bool inter) {
  static const std::vector<double> intra_old{40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
  static const std::vector<double> inter_old{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                             7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  static const std::vector<double> intra_90{60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
  static const std::vector<double> inter_90{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                            15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  if (cc < 90) return inter ? inter_old : intra_old;
  if (cc < 100 || blackwell == NcclBlackwellLists::kNone) return inter ? inter_90 : intra_90;
  using L = NcclBlackwellLists;
  // Blackwell's inter lists end as Hopper's does, from 42 GB/s down.
  const std::vector<double> inter_tail(inter_90.begin() + 2, inter_90.end());
  const auto with = [&](std::vector<double> head) {
    head.insert(head.end(), inter_tail.begin(), inter_tail.end());
    return head;
  };
  if (!inter) {
    if (blackwell == L::k2_25) return {90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0};
    if (blackwell < L::k2_29) return {90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
    return {90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
  }
  switch (blackwell) {
    case L::kNone:
    case L::k2_25: return inter_90;
    case L::k2_27: return with({47.9, 45.0});
    case L::k2_27_5: return with({48.0, 45.1});
    case L::k2_27_6:
    case L::k2_29: return with({96.0, 48.0, 45.1});
    case L::k2_29_7: return with({96.0, 80.0, 48.0, 45.1});
    case L::k2_30: break;
  }
  return with({96.0, 86.0, 80.0, 48.0, 45.1});
}

double fastest_speed_within(const std::vector<double>& list, double limit) {
  for (double s : list) {
    if (s <= limit + 1e-9) return s;
  }
  return list.back();
}

}  // namespace

int nccl_proto_index(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kLL: return kLL;
    case NcclProtocol::kLL128: return kLL128;
    case NcclProtocol::kSimple: return kSimple;
    case NcclProtocol::kNone: break;
  }
  return -1;
}

namespace {
// "2.21.5-1" -> {2, 21, 5}; the patch is -1 where the release names none ("2.21").
struct NcclRelease {
  int major = 0, minor = -1, patch = -1;
};

std::optional<NcclRelease> parse_release(std::string_view version) {
  NcclRelease v;
  const char* begin = version.data();
  const char* end = begin + version.size();
  auto r = std::from_chars(begin, end, v.major);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != '.') return std::nullopt;
  auto m = std::from_chars(r.ptr + 1, end, v.minor);
  if (m.ec != std::errc()) return std::nullopt;
  if (m.ptr != end && *m.ptr == '.') {
    auto p = std::from_chars(m.ptr + 1, end, v.patch);
    if (p.ec != std::errc()) return std::nullopt;
    m.ptr = p.ptr;
  }
  if (m.ptr != end && *m.ptr != '-') return std::nullopt;
  if (v.major != 2) return std::nullopt;
  return v;
}
}  // namespace

int nccl_minor_version(std::string_view version) {
  const auto v = parse_release(version);
  return v ? v->minor : -1;
}

std::optional<NcclRules> nccl_rules(std::string_view version) {
  const auto v = parse_release(version);
  if (!v || v->minor < 18) return std::nullopt;
  const int minor = v->minor;
  // A line without a patch takes its last release's rules.
  const int patch = v->patch >= 0 ? v->patch : std::numeric_limits<int>::max();
  NcclRules r;
  if (minor == 18) r = rules_2_18();
  else if (minor <= 20) r = rules_2_19();
  else if (minor <= 22) r = rules_2_21();
  else if (minor <= 24) r = rules_2_23();
  else if (minor <= 26) r = rules_2_25();
  else if (minor == 27) r = rules_2_27(patch);
  else if (minor == 28) r = rules_2_28(patch);
  else if (minor == 29) r = rules_2_29(patch);
  else r = rules_2_30();
  // The communicator's channel rules moved at releases inside the lines (v2.19.3-1 against
  // v2.20.3-1; v2.24.3-1 against v2.25.1-1).
  r.max_channels = minor >= 25 ? 64 : 32;
  r.fast_ring_doubling = minor <= 19   ? NcclRules::FastRingDoubling::kWithinMax
                         : minor <= 24 ? NcclRules::FastRingDoubling::kBelow16Hopper
                                       : NcclRules::FastRingDoubling::kBelow16HopperOn;
  // Within 2.27, 2.28 and 2.29 a patch release changed figures: the rules then name it.
  if (minor >= 27 && minor <= 29 && v->patch >= 0) r.version += "." + std::to_string(v->patch);
  return r;
}

const std::vector<std::string>& nccl_rule_versions() {
  static const std::vector<std::string> v{"2.18", "2.19", "2.21", "2.23", "2.25", "2.27", "2.28", "2.29", "2.30"};
  return v;
}

bool NcclRules::ll128_by_default(int compute_capability) const {
  if (compute_capability < 70) return false;
  switch (ll128_default) {
    case Ll128Default::kVoltaAmpereHopper:
      return compute_capability == 70 || compute_capability == 80 || compute_capability == 90;
    case Ll128Default::kListedBlackwell:
      return compute_capability == 70 || compute_capability == 80 || compute_capability == 90 || compute_capability == 100 ||
             compute_capability == 120;
    case Ll128Default::kAll: break;
  }
  return true;
}

int nccl_comm_channels(const NcclRules& rules, const NcclGraph& ring, int compute_capability, int nodes, int min_ctas,
                       int max_ctas) {
  if (ring.channels <= 0) return 0;
  int n = std::min(rules.max_channels, 2 * ring.channels);
  using Doubling = NcclRules::FastRingDoubling;
  const bool hopper = rules.fast_ring_doubling == Doubling::kBelow16HopperOn ? compute_capability >= 90 : compute_capability == 90;
  if (hopper && nodes > 1 && ring.bw_intra > 45.0) {
    const bool room = rules.fast_ring_doubling == Doubling::kWithinMax ? 2 * n <= rules.max_channels : n < 16;
    if (room) n *= 2;
  }
  const int most = max_ctas > 0 ? std::min(max_ctas, rules.max_channels) : rules.max_channels;
  const int least = std::min(min_ctas > 0 ? std::min(min_ctas, rules.max_channels) : 0, most);
  return std::max(std::min(n, most), least);
}

int floor_log2(int n) {
  int l = 0;
  while ((2 << l) <= n) ++l;
  return l;
}

NcclCostModel::NcclCostModel(const NcclRules& rules, const NcclSystem& system) : rules_(rules), system_(system) {}

NcclStepLatency NcclCostModel::step_latency(NcclAlgo algo, NcclProtocol proto) const {
  const int a = static_cast<int>(algo);
  const int p = nccl_proto_index(proto);
  if (p < 0) return {};
  const NcclSystem& s = system_;
  const NcclRules& r = rules_;
  const NcclGraph& g = s.graphs[static_cast<std::size_t>(a)];
  const int n_ranks = std::max(1, s.ranks), n_nodes = std::max(1, s.nodes);
  const double ppn = static_cast<double>(n_ranks) / n_nodes;
  const int intra_hw = s.nvlink ? kNvlinkHw : kPcieHw;
  NcclStepLatency step;
  step.base_us = r.base[static_cast<std::size_t>(a)][static_cast<std::size_t>(p)];
  step.intra_us = r.hw[static_cast<std::size_t>(intra_hw)][static_cast<std::size_t>(a)][static_cast<std::size_t>(p)];
  const int net_algo = r.tree_net_latency_at_one_gpu_per_node && ppn == 1 ? kTree : a;
  step.inter_us = r.hw[kNetHw][static_cast<std::size_t>(net_algo)][static_cast<std::size_t>(p)] + g.latency_inter;
  if (p == kSimple) step.inter_us += g.latency_inter;  // the flush
  // Inter-node rings still launch every step through the proxy: NCCL's net overhead.
  if (a == kRing && n_nodes > 1) step.intra_us = std::max(step.intra_us, s.net_overhead_us * (p == kSimple ? 3 : 1));
  return step;
}

NcclCost NcclCostModel::cost(CollectiveOp op, NcclAlgo algo, NcclProtocol proto) const {
  const int a = static_cast<int>(algo);
  const int p = nccl_proto_index(proto);
  const NcclSystem& s = system_;
  const NcclRules& r = rules_;
  const NcclGraph& g = s.graphs[static_cast<std::size_t>(a)];
  const int n_ranks = std::max(1, s.ranks), n_nodes = std::max(1, s.nodes);
  if (p < 0 || g.channels <= 0 || n_ranks <= 1) return {};
  const bool gather = op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
  const bool all_reduce = op == CollectiveOp::kAllReduce;
  // Which operations each algorithm serves, and NVLS's Simple-only rule.
  if (op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv) return {};
  if ((op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce) && a != kRing) return {};
  if (gather && a != kRing && (r.rules_2_18 || (a != kNvls && a != kCollNet))) return {};
  if ((a == kNvls || a == kNvlsTree) && p != kSimple) return {};
  if (a == kCollNet && p != kSimple) return {};
  if (a == kNvlsTree && n_nodes == 1) return {};
  if (a == kNvlsTree && !all_reduce) return {};
  if (a == kTree && !all_reduce) return {};
  // NCCL leaves NVLS across nodes to CollNet-enabled communicators, and CollNet
  // gathers to fabrics whose NICs reduce: neither is modelled across nodes here.
  if (a == kNvls && n_nodes > 1) return {};
  if (a == kCollNet && gather) return {};

  const int gen = generation(s.compute_capability);
  const int nc = node_class(n_nodes);
  const double ppn = static_cast<double>(n_ranks) / n_nodes;
  const int nsteps = all_reduce ? 2 * (n_ranks - 1) : gather ? n_ranks - 1 : n_ranks;
  const int ll_row = n_nodes == 1 ? gen : (s.cpu == NcclCpu::kAmd ? 1 : 0);
  const double ll_max = r.ll_max_bw[static_cast<std::size_t>(ll_row)][static_cast<std::size_t>(nc)];

  double bw = n_nodes <= 2 || a == kCollNet ? g.bw_intra : g.bw_inter;
  if (a == kNvls || a == kNvlsTree) {
    if (r.nvls_efficiency[static_cast<std::size_t>(gen)] > 0) {
      if (g.channels < 2) return {};
      double intra = g.bw_intra * r.nvls_efficiency[static_cast<std::size_t>(gen)] * (g.channels - 1) / g.channels;
      intra *= all_reduce ? 2.0 : (ppn - 1) / ppn;
      const double inter = g.bw_inter * (n_nodes <= 2 && a == kNvlsTree ? 2 : 1);
      const double cap = a == kNvlsTree ? r.nvls_tree_per_channel[static_cast<std::size_t>(gen)][static_cast<std::size_t>(nc)]
                                        : std::numeric_limits<double>::max();
      bw = std::min({intra, inter, cap > 0 ? cap : std::numeric_limits<double>::max()});
    } else if (!r.rules_2_18) {
      if (a == kNvls) bw = std::min(g.bw_intra, g.bw_inter);
      if (a == kNvlsTree) bw = std::min(g.bw_intra, n_nodes <= 2 ? g.bw_inter : g.bw_inter / 2);
    }
  }
  double bus = g.channels * bw;
  if (a == kRing && p == kLL) {
    const double share = r.ring_ll_quarter ? ((n_nodes > 1 || all_reduce || op == CollectiveOp::kReduce) ? 0.25 : 1.0 / 3.0) : 0.5;
    bus = std::min(ll_max, bus * share);
  }
  if (a == kRing && p == kLL128) {
    const double share = ppn < 2 ? r.ring_ll128_one_gpu_share : 0.92;
    bus = std::min(bus * share, g.channels * r.ring_ll128_per_channel[static_cast<std::size_t>(gen)][static_cast<std::size_t>(nc)]);
  }
  if (a == kTree) bus = std::min(bus * .92, g.channels * r.tree_per_channel[static_cast<std::size_t>(gen)][static_cast<std::size_t>(nc)]);
  if (a == kTree && p == kLL) bus = std::min(bus / 3.8, ll_max);
  if (a == kTree && p == kLL128) {
    bus = std::min(bus * (n_nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   g.channels * r.tree_ll128_per_channel[static_cast<std::size_t>(gen)][static_cast<std::size_t>(nc)]);
  }
  if (a == kCollNet) {
    // CollNet Direct needs a NIC per GPU for full speed: the GPU-per-NIC factor, softened.
    double factor = ppn / g.channels;
    factor -= (factor - 1) / 2;
    bus /= factor;
    if (s.compute_capability >= 90) bus *= .85;
  }
  double ratio = .5;
  if (a == kRing) ratio = static_cast<double>(n_ranks) / nsteps;
  if (a == kNvls || a == kNvlsTree) {
    if (r.nvls_efficiency[static_cast<std::size_t>(gen)] > 0) {
      ratio = static_cast<double>(n_ranks) / nsteps;
    } else if (r.rules_2_18 && a == kNvlsTree) {
      ratio = .70 * n_nodes / (2.0 * (n_nodes - 1));
    } else {
      ratio = 5.0 / 6.0;
    }
  }
  // Gathers and scatters on NVLS keep their bus bandwidth as NCCL's algorithm bandwidth.
  if (gather && a != kRing) ratio = 1.0;
  NcclCost c;
  c.algbw_GBps = bus * ratio;
  c.channel_GBps = bus / g.channels;

  const int intra_hw = s.nvlink ? kNvlinkHw : kPcieHw;
  const NcclStepLatency step = step_latency(algo, proto);
  c.latency_us = step.base_us;
  const double intra_lat = step.intra_us, inter_lat = step.inter_us;
  const int local = n_ranks / n_nodes;
  switch (a) {
    case kRing: {
      const int hw = n_nodes == 1 ? intra_hw : kNetHw;
      if (op == CollectiveOp::kReduce || op == CollectiveOp::kBroadcast) {
        // One hop where every channel is the same ring; else per step (the tree's for Simple).
        double lat = r.hw[static_cast<std::size_t>(hw)][kRing][static_cast<std::size_t>(p)];
        if (g.same_channels) {
          c.latency_us += lat;
        } else {
          if (p == kSimple) lat = r.hw[static_cast<std::size_t>(hw)][kTree][static_cast<std::size_t>(p)];
          c.latency_us += nsteps * lat;
        }
      } else {
        int inter_steps = 0;
        if (n_nodes > 1) {
          if (r.ring_inter_steps_per_node_pair) inter_steps = all_reduce ? 2 * (n_nodes - 1) : n_nodes - 1;
          else inter_steps = all_reduce ? 2 * n_nodes : n_nodes - 1;
        }
        c.latency_us += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
      }
      break;
    }
    case kTree: c.latency_us += 2 * ((local - 1) * intra_lat + floor_log2(n_nodes) * inter_lat); break;
    case kCollNet:
      c.latency_us += 2 * (std::min(1, local - 1) * intra_lat + (local - 1) * r.collnet_arity_us) + inter_lat;
      break;
    case kNvls:
      if (r.rules_2_18) {
        if (n_nodes > 1) c.latency_us += r.hw[kNetHw][kNvls][kSimple];
      } else {
        c.latency_us = intra_lat + (n_nodes > 1 ? inter_lat : 0.0);
      }
      break;
    case kNvlsTree:
      if (r.rules_2_18) c.latency_us += 2 * (n_nodes - 1) * r.hw[kNetHw][kNvlsTree][kSimple];
      else c.latency_us += intra_lat + 2 * floor_log2(n_nodes) * inter_lat;
      break;
    default: break;
  }
  return c;
}

namespace {
// NCCL's correction of the tree's bandwidth for medium sizes, by log2(bytes / 64): 23
// entries for the tree, 24 for NVLS-tree (2.29 on).
double tree_correction(int proto, std::int64_t bytes, int entries) {
  static constexpr double kFactor[3][24] = {
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
  const int log_size = floor_log2(static_cast<int>(std::min<std::int64_t>(std::max<std::int64_t>(bytes >> 6, 1), 1 << 30)));
  if ((bytes >> 6) < 1 || log_size >= entries) return 1.0;
  return kFactor[proto][log_size];
}
}  // namespace

double NcclCostModel::latency_us(CollectiveOp op, NcclAlgo a, NcclProtocol p, std::int64_t bytes) const {
  const NcclCost c = cost(op, a, p);
  double lat = c.latency_us;
  const int channels = system_.comm_channels > 0 ? system_.comm_channels : system_.graphs[static_cast<std::size_t>(NcclAlgo::kRing)].channels;
  if (a == NcclAlgo::kRing && p == NcclProtocol::kSimple && system_.nodes > 1 && op == CollectiveOp::kAllReduce &&
      bytes / std::max<std::int64_t>(1, static_cast<std::int64_t>(channels) * system_.ranks) >= 64) {
    lat *= system_.compute_capability < 80 ? 1.9 : 1.4;  // NCCL's plateau of the ring
  }
  return lat;
}

double NcclCostModel::time_us(CollectiveOp op, NcclAlgo a, NcclProtocol p, std::int64_t bytes) const {
  const NcclCost c = cost(op, a, p);
  if (c.algbw_GBps <= 0) return -1.0;
  double bw = c.algbw_GBps;
  if (a == NcclAlgo::kTree && op == CollectiveOp::kAllReduce) bw *= tree_correction(nccl_proto_index(p), bytes, 23);
  if (a == NcclAlgo::kNvlsTree && op == CollectiveOp::kAllReduce && rules_.nvls_tree_size_correction_blackwell_x86 &&
      system_.compute_capability >= 100 && system_.cpu != NcclCpu::kArm) {
    bw *= tree_correction(nccl_proto_index(p), bytes, 24);
  }
  return latency_us(op, a, p, bytes) + static_cast<double>(bytes) / (1000 * bw);
}

NcclGraph nccl_ring_graph(int cc, double nvlink_GBps, double nic_GBps, int nics_per_node, int nodes, NcclBlackwellLists blackwell) {
  // NCCL searches for as many channels as its paths carry at the fastest listed speed;
  // across nodes each channel leaves through one NIC, so a node's NICs give its channels.
  NcclGraph g;
  const double intra_cap = nvlink_GBps > 0 ? nvlink_GBps : nic_GBps;
  if (intra_cap <= 0) return g;
  if (nodes > 1 && nic_GBps > 0) {
    g.channels = std::max(1, nics_per_node);
    const double limit = std::min(nic_GBps, intra_cap / g.channels);
    g.bw_intra = g.bw_inter = fastest_speed_within(speeds(cc, blackwell, true), limit);
  } else {
    g.same_channels = true;
    // One node: the channel count and speed that carry the most, the faster on a tie.
    double best = 0;
    for (double s : speeds(cc, blackwell, false)) {
      const int c = std::min(16, static_cast<int>(std::floor(intra_cap / s + 1e-9)));
      if (c >= 1 && c * s > best + 1e-9) best = c * s, g.channels = c, g.bw_intra = g.bw_inter = s;
    }
  }
  // NCCL duplicates fast channels (ncclTopoDupChannels): not below 25 GB/s, nor on
  // Hopper and later below 50 GB/s with more than four channels.
  if (g.channels > 0 && g.bw_intra >= 25.0 && !(cc > 80 && g.bw_intra < 50.0 && g.channels > 4)) {
    const int dup = std::min(g.channels * 2, 32);
    const int divide = (dup + g.channels - 1) / g.channels;
    g.bw_intra /= divide;
    g.bw_inter /= divide;
    g.channels = dup;
  }
  return g;
}

NcclGraph nccl_tree_graph(int cc, double nvlink_GBps, double nic_GBps, int nics_per_node, int nodes, NcclBlackwellLists blackwell) {
  NcclGraph g = nccl_ring_graph(cc, nvlink_GBps, nic_GBps, nics_per_node, nodes, blackwell);
  if (nodes != 2 || g.channels <= 0 || nvlink_GBps <= 0) return g;
  const double limit = std::min(2 * g.bw_inter, nvlink_GBps / g.channels);
  g.bw_intra = std::max(g.bw_intra, fastest_speed_within(speeds(cc, blackwell, false), limit));
  return g;
}

NcclGraph nccl_one_node_tree_graph(int cc, double nvlink_GBps, int ring_channels, int gpus, NcclBlackwellLists blackwell) {
  NcclGraph g;
  if (nvlink_GBps <= 0 || ring_channels <= 0 || gpus < 2) return g;
  g.same_channels = true;
  g.channels = ring_channels;
  const double carried = (gpus == 2 ? 2 : 1) * nvlink_GBps / ring_channels;
  g.bw_intra = g.bw_inter = fastest_speed_within(speeds(cc, blackwell, false), carried);
  return g;
}

int nccl_nvls_run_channels(int cc, int nodes, NcclBlackwellLists blackwell, int blackwell_domain_channels) {
  if (cc < 100 || blackwell == NcclBlackwellLists::kNone) return 16;
  return nodes == 1 ? blackwell_domain_channels : 32;
}

NcclGraph nccl_nvls_graph(int cc, double nvlink_GBps, double nic_GBps, int nics_per_node, int nodes, int gpus,
                          bool search_2_18, NcclBlackwellLists blackwell, int blackwell_domain_channels) {
  NcclGraph g;
  if (nvlink_GBps <= 0) return g;
  const int run_channels = nccl_nvls_run_channels(cc, nodes, blackwell, blackwell_domain_channels);
  if (nodes == 1 && gpus >= 1) {
    constexpr int kMaxArity = 32;  // NCCL_MAX_NVLS_ARITY
    std::vector<double> list = speeds(cc, blackwell, false);
    if (search_2_18) list.erase(std::remove(list.begin(), list.end(), 50.0), list.end());
    g.channels = std::min(kMaxArity, gpus);
    g.bw_intra = fastest_speed_within(list, nvlink_GBps / (gpus + 1));
    g.bw_inter = g.bw_intra;
    if (!search_2_18) {
      auto at = std::find(list.begin(), list.end(), g.bw_intra);
      while (at != list.begin() && g.bw_inter < 2 * g.bw_intra) g.bw_inter = *--at;
    }
    g.run_channels = run_channels;
    return g;
  }
  g.channels = 16;
  g.run_channels = run_channels;
  g.bw_intra = fastest_speed_within(speeds(cc, blackwell, false), nvlink_GBps / g.channels);
  g.bw_inter = g.bw_intra;
  if (nodes > 1 && nic_GBps > 0) {
    g.bw_inter = fastest_speed_within(speeds(cc, blackwell, true), nic_GBps * std::max(1, nics_per_node) / g.channels);
  }
  return g;
}

std::int64_t nccl_simple_buffer_bytes(const NcclRules& rules, NcclCpu cpu, std::int64_t asked) {
  if (asked > 0) return asked;
  return rules.rules_2_18 && cpu == NcclCpu::kArm ? std::int64_t{1} << 20 : kNcclDefaultSimpleBuffer;
}

}  // namespace fabricsim
