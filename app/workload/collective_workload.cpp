// A collective swept over sizes, as nccl-tests runs it (app/workload/collective_sweep.h).
#include "app/config/profile.h"
#include "app/config/workload_config.h"
#include "app/workload/collective_sweep.h"
#include "app/workload/tuner_facts.h"
#include "app/workload/workload_kind.h"
#include "workloads/collectives/collective_algorithms.h"
#include "workloads/collectives/nccl_protocol.h"
#include "workloads/collectives/nvls.h"
#include "workloads/collectives/tuner.h"

#include <algorithm>

namespace fabricsim {

namespace {

void read_collective(MapReader& m, CollectiveConfig& c) {
  c.op = m.choice<CollectiveOp>("op", {{"all_reduce", CollectiveOp::kAllReduce}, {"reduce_scatter", CollectiveOp::kReduceScatter},
                                       {"all_gather", CollectiveOp::kAllGather}, {"broadcast", CollectiveOp::kBroadcast},
                                       {"reduce", CollectiveOp::kReduce}, {"all_to_all", CollectiveOp::kAllToAll},
                                       {"send_recv", CollectiveOp::kSendRecv}});
  std::vector<std::pair<std::string, std::string>> algorithms{{"auto", "auto"}, {"msccl", "msccl"}, {"steps", "steps"}};
  for (const auto& name : algorithm_names()) algorithms.emplace_back(name, name);
  c.algorithm = m.choice<std::string>("algorithm", algorithms, std::string("ring"));
  c.protocol_given = m.has("protocol");
  c.protocol = m.choice<std::string>("protocol", {{"none", "none"}, {"auto", "auto"}, {"simple", "simple"}, {"ll", "ll"}, {"ll128", "ll128"}},
                                     c.protocol);
  if (c.algorithm == "msccl" || c.algorithm == "steps") {
    c.file = m.string("file");
    c.file_source = m.context().source(m.node()["file"], m.child_path("file"));
  } else {
    m.string("file", std::string());
  }
  // One size, or a sweep from..to multiplying by factor (nccl-tests' -b -e -f).
  if (m.has("sizes") && m.has("bytes")) {
    m.context().fail(m.node()["bytes"], m.child_path("bytes"), "expected either bytes or sizes, not both");
  }
  if (m.has("sizes")) {
    MapReader sweep = m.map("sizes");
    const std::int64_t from = sweep.bytes("from", 1, INT64_C(1) << 40);
    const std::int64_t to = sweep.bytes("to", from, INT64_C(1) << 40);
    const std::int64_t factor = sweep.integer("factor", 2, 1024, 2);
    sweep.finish();
    for (std::int64_t b = from; b <= to; b *= factor) c.sizes.push_back(b);
  } else {
    m.map("sizes", false);
    c.sizes.push_back(m.bytes("bytes", 1, INT64_C(1) << 40));
  }
  c.ranks = static_cast<int>(m.integer("ranks", 2, 1 << 20, 0));
  c.channels = m.has("channels") ? static_cast<int>(m.integer("channels", 1, 64)) : 0;
  c.chunk_bytes = m.bytes("chunk_bytes", 0, INT64_C(1) << 40, 0);
  c.root = static_cast<int>(m.integer("root", 0, c.ranks > 0 ? c.ranks - 1 : (1 << 20), 0));
  c.local_size = static_cast<int>(m.integer("local_size", 0, 4096, 0));
  c.reduce_bytes_per_second = static_cast<double>(m.bandwidth("reduce_bandwidth", Bandwidth{1}).bits_per_second) / 8;
  if (!m.has("reduce_bandwidth")) c.reduce_bytes_per_second = 0;
  if (m.has("profile")) {
    // A measured GPU profile (calibrate gpu) sets the reduce speed unless it is written out;
    // nccl-tests reduces floats, so the fp32 figure.
    const LinkProfile profile = load_profile_key(m);
    if (!profile.reduce_GBps_fp32) m.context().fail(m.node()["profile"], m.child_path("profile"), "expected a profile with gpu.reduce_fp32");
    if (!m.has("reduce_bandwidth")) c.reduce_bytes_per_second = *profile.reduce_GBps_fp32 * 1e9;
  }
  c.check_data = m.boolean("check_data", true);
}

}  // namespace

void read_collective_workload(MapReader& m, WorkloadConfig& w, const WorkloadReading& reading) {
  read_placement(m, w);
  read_collective(m, w.collective);
  const std::string sizes_key = m.has("sizes") ? "sizes" : "bytes";
  for (std::int64_t size : w.collective.sizes) check_packet_count(m.context(), m.node()[sizes_key], m.child_path(sizes_key), size, reading.mtu);
  if (!w.placement.empty()) {
    if (w.placement.size() < 2) m.context().fail(m.node()["placement"], m.child_path("placement"), "expected at least two endpoints");
    if (w.collective.ranks != 0 && w.collective.ranks != static_cast<int>(w.placement.size())) {
      m.context().fail(m.node()["ranks"], m.child_path("ranks"),
                       "expected " + std::to_string(w.placement.size()) + " (the endpoints in `placement`), or leave it out");
    }
    w.collective.ranks = static_cast<int>(w.placement.size());
  }
}

WorkloadStart make_collective_workload(const WorkloadSetup& s) {
  WorkloadStart start;
  start.driver = std::make_unique<CollectiveSweep>(s.network, s.topology, s.config, s.placement, s.setup_note);
  return start;
}

namespace {

// The collective's endpoints, as the sweep places them: its placement's (names not found
// are the run's error to report, skipped here), or the first `ranks`.
std::vector<std::uint32_t> collective_hosts(const WorkloadConfig& w, const Topology& t, std::uint64_t ranks) {
  std::vector<std::uint32_t> hosts;
  for (const std::string& name : w.placement) {
    if (const auto node = t.find(name); node && t.node(*node).kind == NodeKind::kHost) hosts.push_back(t.node(*node).kind_index);
  }
  if (w.placement.empty()) {
    for (std::uint64_t r = 0; r < ranks; ++r) hosts.push_back(static_cast<std::uint32_t>(r));
  }
  if (hosts.empty()) hosts.push_back(0);
  return hosts;
}

// Whether every size's ring runs as one flow per channel (CollectiveSweep::coupled_rings_for),
// `pieces` being the largest size's NCCL pieces a segment.
bool coupled_ring(const ScenarioConfig& config, const TunerFacts& group, std::uint64_t pieces) {
  const NetworkConfig& n = config.network;
  const CollectiveConfig& c = config.workload.collective;
  if (n.fidelity != NetworkConfig::Fidelity::kFlow || n.flow_rings == NetworkConfig::FlowRings::kSteps) return false;
  if (c.algorithm != "ring" || c.check_data || c.reduce_bytes_per_second > 0 || c.chunk_bytes > 0 || pieces > 1) return false;
  if (c.op != CollectiveOp::kAllReduce && c.op != CollectiveOp::kAllGather && c.op != CollectiveOp::kReduceScatter) return false;
  const bool one_node = config.topology.kind != TopologyConfig::Kind::kCluster || group.nodes == 1;
  return n.flow_rings == NetworkConfig::FlowRings::kCoupled || one_node;
}

}  // namespace

WorkloadNeeds collective_needs(const ScenarioConfig& config, const Topology& t) {
  WorkloadNeeds needs;
  const WorkloadConfig& w = config.workload;
  const std::uint64_t hosts = t.host_count();
  // The largest size's first step: every rank sends on every channel at once.
  const std::int64_t biggest = w.collective.sizes.empty() ? 0 : *std::max_element(w.collective.sizes.begin(), w.collective.sizes.end());
  const std::uint64_t ranks = w.collective.ranks > 0 ? static_cast<std::uint64_t>(w.collective.ranks) : hosts;
  TunerFacts group = tuner_facts_for_group(config.topology, collective_hosts(w, t, ranks));
  apply_nccl_settings(group, config.network);
  // Unset channels are NCCL's: its ring graph's on this topology (1 for the ideal network).
  int nccl_channels = 1;
  const std::string& algo = w.collective.algorithm;
  if (w.collective.channels == 0 && w.collective.protocol != "none" && (algo == "ring" || algo == "tree" || algo == "auto")) {
    const NcclSystem system = nccl_system(group);
    nccl_channels = std::max(1, nccl_run_channels(group, system, system.graphs[static_cast<std::size_t>(NcclAlgo::kRing)]).channels);
  }
  const auto channels = static_cast<std::uint64_t>(w.collective.channels > 0 ? w.collective.channels : nccl_channels);
  needs.packets += ranks * channels * packets_of(config, biggest / 2);
  // The step programs, held by the check and by the executor, and the check's
  // send/receive matching (a queue per sender, receiver and channel): each
  // algorithm's own footprint (workloads/collectives/collective_algorithms.h).
  FootprintFacts facts;
  facts.ranks = ranks;
  facts.channels = channels;
  while ((1ull << facts.log2_ranks) < ranks) ++facts.log2_ranks;
  if (w.collective.op == CollectiveOp::kAllToAll && w.collective.protocol != "none" && w.collective.channels == 0 && biggest > 0) {
    // NCCL's p2p plan cuts each block in parts, a send and a receive each.
    const TunerChoice choice = choose_algorithm(w.collective.op, biggest, group, "auto", w.collective.protocol);
    if (choice.p2p) facts.channels = static_cast<std::uint64_t>(choice.p2p->parts);
  }
  if (w.collective.protocol != "none" && (algo == "ring" || algo == "tree" || algo == "auto") && biggest > 0) {
    // NCCL's pipeline cuts the largest size's segments into its pieces.
    const TunerChoice choice = choose_algorithm(w.collective.op, biggest, group, algo, w.collective.protocol);
    if (const auto pf = nccl_pipeline_facts(choice, w.collective.op, biggest, static_cast<int>(channels), group)) {
      facts.pieces = static_cast<std::uint64_t>(nccl_pieces(choice.protocol, *pf));
    }
  }
  if (coupled_ring(config, group, facts.pieces)) {
    // One flow per channel over the ring's edges (CollectiveSweep::coupled_rings_for): the
    // edges, and each edge's links in the ring's route.
    needs.message_bytes += ranks * channels * (2 * sizeof(HostId) + 8 * sizeof(std::uint64_t));
    return needs;
  }
  const NvSwitchSpec* node = config.topology.kind == TopologyConfig::Kind::kNvSwitch ? &config.topology.nvswitch
                             : config.topology.kind == TopologyConfig::Kind::kCluster ? &config.topology.cluster.node
                                                                                       : nullptr;
  if (node != nullptr && node->nvls_bandwidth.bits_per_second > 0) {
    facts.nvls_gpus = std::min<std::uint64_t>(ranks, static_cast<std::uint64_t>(node->gpus));
    facts.nvls_channels = w.collective.channels > 1 ? static_cast<std::uint64_t>(w.collective.channels) : kNvlsChannels;
    // Each size's pieces: the config's chunk, else NCCL's (smaller for smaller sizes,
    // nccl_nvls_chunk_bytes), else the ideal network's 128 KiB.
    TunerChoice nvls;
    nvls.algorithm = group.nodes > 1 ? "nvls_tree" : "nvls";
    nvls.protocol = w.collective.protocol != "none" ? NcclProtocol::kSimple : NcclProtocol::kNone;
    facts.nvls_pieces = 1;
    for (const std::int64_t size : w.collective.sizes) {
      const std::int64_t nccl = nccl_chunk_bytes(nvls, w.collective.op, size, static_cast<int>(facts.nvls_channels), group);
      const std::uint64_t chunk = static_cast<std::uint64_t>(w.collective.chunk_bytes > 0 ? w.collective.chunk_bytes
                                                             : nccl > 0                   ? nccl
                                                                                          : kNvlsChunkBytes);
      const std::uint64_t share = static_cast<std::uint64_t>(std::max<std::int64_t>(0, size)) / facts.nvls_gpus / facts.nvls_channels;
      facts.nvls_pieces = std::max(facts.nvls_pieces, std::min<std::uint64_t>(4096, (share + chunk - 1) / chunk));
    }
  }
  // Every rank sends straight to every other in an AllToAll, whatever `algorithm` says;
  // `auto` may run the ring or NVLS-tree; custom algorithms count as a ring.
  const std::string& a = w.collective.op == CollectiveOp::kAllToAll ? std::string("direct") : w.collective.algorithm;
  ProgramFootprint footprint = ring_footprint(facts);
  if (a == "auto") {
    const ProgramFootprint nvls = find_collective_algorithm("nvls_tree")->footprint(facts);
    footprint.steps = std::max(footprint.steps, nvls.steps);
    footprint.bytes_per_step = nvls.bytes_per_step;
  } else if (const CollectiveAlgorithm* algorithm = find_collective_algorithm(a)) {
    footprint = algorithm->footprint(facts);
  }
  const std::uint64_t steps = footprint.steps, peers = footprint.peers, per_step = footprint.bytes_per_step;
  needs.message_bytes += ranks * (steps * per_step + peers * 2 * 700);
  return needs;
}

}  // namespace fabricsim
