#include "app/output/flow_stats.h"

#include <algorithm>
#include <climits>
#include <iterator>
#include <cmath>
#include <functional>


namespace fabricsim {

IdleFctModel::IdleFctModel(const ScenarioRun& run)
    : run_(&run), adj_(adjacency(run.topology())), memo_(run.topology().nodes().size(), -1) {}

// The compiled network's table at topology node u (the same routes the packets take).
std::span<const PortIndex> IdleFctModel::next_hops(std::uint32_t u, HostId dst) const {
  const Network& net = run_->network();
  const TopologyNode& n = run_->topology().node(u);
  const RouteTable& table = n.kind == NodeKind::kHost         ? net.nic(n.kind_index).routes()
                            : net.is_rdma_nic(n.kind_index) ? net.rdma_nic(n.kind_index).routes()
                                                            : net.switch_at(n.kind_index).routes();
  return table.to(dst, net.host_groups()[dst]);
}

IdleFctModel::Estimate IdleFctModel::estimate(HostId src, HostId dst, std::int64_t bytes) const {
  const Topology& t = run_->topology();
  const auto& adj = adj_;
  const NicConfig& nic = run_->network().params().nic;
  const bool switches_spread = run_->network().params().load_balancing != LoadBalancing::kEcmp;
  const std::uint32_t packets = packets_for(bytes, nic.mtu);
  const std::int64_t first_wire = std::min<std::int64_t>(bytes, nic.mtu) + nic.header_bytes;
  const std::int64_t full_wire = static_cast<std::int64_t>(nic.mtu) + nic.header_bytes;
  const std::int64_t last_wire = bytes - static_cast<std::int64_t>(packets - 1) * nic.mtu + nic.header_bytes;

  Time first_packet = 0, propagation = 0, ack = 0;
  std::uint32_t u = t.host_node(src);
  const std::uint32_t target = t.host_node(dst);
  for (int guard = 0; u != target && guard < 1024; ++guard) {
    const auto ports = next_hops(u, dst);
    if (ports.empty()) return {-1, 0};
    const TopologyLink& link = t.links()[adj[u][ports[0]].link];
    const std::uint32_t v = adj[u][ports[0]].node;
    const auto rdma_nic = [&](std::uint32_t n) {
      return t.node(n).kind == NodeKind::kSwitch && run_->network().is_rdma_nic(t.node(n).kind_index);
    };
    if (t.node(u).kind == NodeKind::kHost && rdma_nic(v)) {
      // Before the first packet: the GPU's work request and the NIC's read, each a
      // control packet's trip over PCIe (the read's answer is the first packet's hop).
      first_packet += 2 * (serialization(nic.ack_bytes, link.bandwidth) + link.latency);
    }
    if (!(rdma_nic(u) && t.node(v).kind == NodeKind::kHost)) {
      // An RDMA NIC acknowledges what reaches it: its DMA write into the GPU is past the
      // finish, and the ack's trip starts there (the sender's completion is the ack's
      // hop into the sending GPU).
      first_packet += serialization(first_wire, link.bandwidth);
      propagation += link.latency;
      ack += serialization(nic.ack_bytes, link.bandwidth) + link.latency;
    }
    u = v;
  }
  // The rate the flow can reach alone: over the routed DAG, a node that spreads packets
  // (an endpoint always, a switch under spray or adaptive) adds up its next hops, a node
  // that pins a flow (ECMP) follows one; each hop is capped by its link.
  std::vector<double>& memo = memo_;
  for (std::uint32_t n : memo_used_) memo[n] = -1;
  memo_used_.clear();
  const std::function<double(std::uint32_t)> rate = [&](std::uint32_t n) -> double {
    if (n == target) return 1e300;
    if (memo[n] >= 0) return memo[n];
    const bool spreads = t.node(n).kind == NodeKind::kHost || switches_spread;
    double r = 0;
    for (PortIndex p : next_hops(n, dst)) {
      r += std::min(static_cast<double>(t.links()[adj[n][p].link].bandwidth.bits_per_second), rate(adj[n][p].node));
      if (!spreads) break;
    }
    memo_used_.push_back(n);
    return memo[n] = r;
  };
  const double bottleneck = rate(t.host_node(src));
  // Packets after the first, at the bottleneck rate (the last may be shorter).
  double rest_bits = 0;
  if (packets > 1) rest_bits = (static_cast<double>(packets - 2) * static_cast<double>(full_wire) + static_cast<double>(last_wire)) * 8;
  const Time rest = static_cast<Time>(std::ceil(rest_bits / bottleneck * 1e12));
  return {first_packet + rest + propagation + ack, bottleneck};
}

Percentiles percentiles(std::vector<double>& v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  const auto rank = [&](double q) {
    const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
  };
  p.p50 = rank(0.50);
  p.p90 = rank(0.90);
  p.p99 = rank(0.99);
  p.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  p.mean = sum / static_cast<double>(v.size());
  return p;
}

FlowSummary summarize_flows(const ScenarioRun& run, MessageId first) {
  FlowSummary s;
  const auto& msgs = run.network().messages().all();
  std::vector<double> fct, slowdown;
  double throughput = 0;
  const IdleFctModel alone_fct(run);
  static constexpr std::int64_t kBucketMax[] = {10'000, 100'000, 1'000'000, 10'000'000, INT64_MAX};
  constexpr std::size_t kBuckets = std::size(kBucketMax);
  std::vector<FlowSizeBucket> buckets(kBuckets);
  std::vector<std::vector<double>> bucket_fct(kBuckets), bucket_slowdown(kBuckets);
  // The workload's messages, made before the run (slots made during it, a collective's,
  // were reused as it went, and are not flows of the workload).
  const std::size_t kept = std::min<std::size_t>(msgs.size(), run.network().messages().recycle_from());
  for (MessageId id = first; id < kept; ++id) {
    const Message& m = msgs[id];
    ++s.flows;
    const auto b = static_cast<std::size_t>(std::find_if(std::begin(kBucketMax), std::end(kBucketMax),
                                                         [&](std::int64_t max) { return m.bytes <= max; }) -
                                            std::begin(kBucketMax));
    ++buckets[b].flows;
    if (m.finished < 0) continue;
    ++s.finished;
    ++buckets[b].finished;
    const Time start = run.message_start(id);
    const Time taken = m.finished - start;
    fct.push_back(to_us(taken));
    bucket_fct[b].push_back(fct.back());
    const IdleFctModel::Estimate alone = alone_fct.estimate(m.src, m.dst, m.bytes);
    slowdown.push_back(static_cast<double>(taken) / static_cast<double>(alone.fct));
    bucket_slowdown[b].push_back(slowdown.back());
    throughput += static_cast<double>(m.bytes) * 8 / to_seconds(taken) / alone.rate_bps;
  }
  s.fct_us = percentiles(fct);
  s.slowdown = percentiles(slowdown);
  for (std::size_t b = 0; b < kBuckets; ++b) {
    if (buckets[b].flows == 0) continue;
    buckets[b].max_bytes = kBucketMax[b];
    buckets[b].fct_us = percentiles(bucket_fct[b]);
    buckets[b].slowdown = percentiles(bucket_slowdown[b]);
    s.by_size.push_back(buckets[b]);
  }
  if (s.finished > 0) s.mean_throughput_fraction = throughput / static_cast<double>(s.finished);
  return s;
}

}  // namespace fabricsim
