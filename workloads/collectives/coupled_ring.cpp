#include "workloads/collectives/coupled_ring.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/endpoint/nic.h"
#include "workloads/collectives/program_builder.h"

namespace fabricsim {

std::vector<CoupledRing::Ring> CoupledRing::on_hosts(const std::vector<Ring>& rings, const std::vector<HostId>& hosts) {
  std::vector<Ring> out = rings;
  for (Ring& r : out) {
    for (auto& [from, to] : r.edges) {
      from = hosts.at(from);
      to = hosts.at(to);
    }
  }
  return out;
}

std::vector<CoupledRing::Ring> CoupledRing::rings_for(CollectiveOp op, int n, std::int64_t bytes, const AlgorithmParams& params) {
  if (n < 2 || params.start_latency_ps != 0) return {};
  if (op != CollectiveOp::kAllReduce && op != CollectiveOp::kAllGather && op != CollectiveOp::kReduceScatter) return {};
  const int channels = std::max(1, params.channels);
  // The program's slots: one per (rank's segment, channel), each ceil(bytes / slots).
  const std::int64_t slots = static_cast<std::int64_t>(n) * channels;
  const std::int64_t chunk = std::max<std::int64_t>(1, (bytes + slots - 1) / slots);
  const int steps = op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
  // As the ring's program cuts a channel's segment (workloads/collectives/ring.cpp).
  const int pieces = collective_building::pieces(bytes / n / channels, params.chunk_bytes);
  std::vector<Ring> rings(static_cast<std::size_t>(channels));
  std::vector<int> successor(static_cast<std::size_t>(n));
  for (int c = 0; c < channels; ++c) {
    const std::vector<int> order = ring_order(n, c, params);
    for (int i = 0; i < n; ++i) successor[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = order[static_cast<std::size_t>((i + 1) % n)];
    Ring& ring = rings[static_cast<std::size_t>(c)];
    ring.chunk = chunk;
    ring.steps = steps;
    ring.pieces = pieces;
    ring.phases = op == CollectiveOp::kAllReduce ? 2 : 1;
    for (int k = 0; k < n; ++k) ring.edges.emplace_back(static_cast<HostId>(k), static_cast<HostId>(successor[static_cast<std::size_t>(k)]));
  }
  return rings;
}

std::uint16_t CoupledRing::fold_equal(std::vector<Ring>& rings) {
  if (rings.size() < 2 || rings.size() > UINT16_MAX) return 1;
  const Ring& first = rings.front();
  const bool equal = std::all_of(rings.begin() + 1, rings.end(), [&](const Ring& r) {
    return r.edges == first.edges && r.steps == first.steps && r.chunk == first.chunk && r.pieces == first.pieces &&
           r.phases == first.phases;
  });
  if (!equal) return 1;
  const auto shares = static_cast<std::uint16_t>(rings.size());
  rings.resize(1);
  rings.front().chunk *= shares;  // each share's sends keep their bytes (chunk / shares)
  return shares;
}

CoupledRing::CoupledRing(Network& network, std::vector<Ring> rings, std::uint16_t shares, std::uint8_t traffic_class,
                         std::function<void(Time)> on_done)
    : CoupledRing(network, std::make_shared<const std::vector<Ring>>(std::move(rings)), shares, traffic_class,
                  std::move(on_done)) {}

CoupledRing::CoupledRing(Network& network, std::shared_ptr<const std::vector<Ring>> rings, std::uint16_t shares,
                         std::uint8_t traffic_class, std::function<void(Time)> on_done)
    : network_(&network), rings_(std::move(rings)), shares_(std::max<std::uint16_t>(1, shares)),
      traffic_class_(traffic_class), on_done_(std::move(on_done)) {
  if (rings_ == nullptr || rings_->empty()) throw std::invalid_argument("a coupled ring needs rings");
}

void CoupledRing::start_at(Time at) { network_->partition(0).schedule_at(*this, at + costs_.start_latency); }

void CoupledRing::on_event() {
  if (!posted_) {
    posted_ = true;
    started_.assign(rings_->size(), network_->partition(0).now());
    const NicConfig& nic = network_->params().nic;
    std::vector<Network::RingFlow> flows;
    for (std::size_t c = 0; c < rings_->size(); ++c) {
      const Ring& r = (*rings_)[c];
      // Each share's sends are messages of their own on the wire: their own headers; and
      // NCCL's protocol's flags in their payload, as the step-by-step ring's sends carry them.
      std::int64_t each = r.chunk / shares_;
      if (costs_.wire_factor != 1.0) each = static_cast<std::int64_t>(std::ceil(static_cast<double>(each) * costs_.wire_factor));
      const std::int64_t piece = (each + r.pieces - 1) / r.pieces;  // one send of NCCL's pipeline
      const std::int64_t wire = static_cast<std::int64_t>(shares_) * r.steps * r.pieces *
                                (piece + static_cast<std::int64_t>(packets_for(piece, nic.mtu)) * nic.header_bytes);
      Network::MessageSpec spec;
      spec.src = r.edges[0].first;
      spec.dst = r.edges[0].second;
      spec.bytes = costs_.wire_factor != 1.0 ? each * shares_ * r.steps : r.chunk * r.steps;
      spec.traffic_class = traffic_class_;
      // Each send at the channel's rate, as the step-by-step ring's: a channel's pieces in
      // flight at once (one per step of its pipeline) each at that rate.
      spec.rate_cap_bps = costs_.rate_cap_bps * std::min(r.pieces, r.steps);
      piece_wire_.push_back(piece + static_cast<std::int64_t>(packets_for(piece, nic.mtu)) * nic.header_bytes);
      spec.connection = static_cast<std::uint16_t>(1 + c);  // its channel's, as the ring's sends (0 is send/recv's)
      const MessageId id = network_->add_message(spec);
      network_->dispatcher().assign(id, this, this);
      ids_.push_back(id);
      flows.push_back({id, &r.edges, piece, wire});
    }
    timings_ = network_->post_ring_flows(flows, shares_, known_routes_);
    return;
  }
  done_ = true;
  on_done_(network_->partition(0).now());
}

int CoupledRing::ring_of(MessageId id) const {
  const auto it = std::find(ids_.begin(), ids_.end(), id);
  return it == ids_.end() ? -1 : static_cast<int>(it - ids_.begin());
}

void CoupledRing::on_message_delivered(MessageId id, Time now) {
  const int r = ring_of(id);
  if (r < 0) return;
  const Ring& ring = (*rings_)[static_cast<std::size_t>(r)];
  const Network::RingFlowTiming& timing = timings_[static_cast<std::size_t>(r)];
  // Step by step, a rank's next send waits for its predecessor's chunk, whose own
  // predecessor's went before it: round the ring a step costs the edges' transfers at
  // their own rates, path delays and flag waits in turn, their means. And an edge sends
  // its steps one after another: the tightest edge's transfers, which the flow took, then
  // one path delay. The ring goes at the slower of the two.
  // In NCCL's pieces, a phase's chain is its first piece's steps, each a piece's transfer
  // and the delays, then the other pieces one transfer apart behind it; a piece's
  // transfer is its share of the flow's, and no faster than one send at the channel's
  // rate where that holds.
  const Time drained = now - timing.deliver_delay;
  const Time started = started_[static_cast<std::size_t>(r)];
  const double sends = static_cast<double>(ring.steps) * static_cast<double>(ring.pieces);
  double piece_time = timing.mean_transfer_share * static_cast<double>(drained - started) / sends;
  if (costs_.rate_cap_bps > 0) {
    const double capped = static_cast<double>(piece_wire_[static_cast<std::size_t>(r)]) * 8e12 / costs_.rate_cap_bps;
    piece_time = std::max(piece_time, costs_.capped_edges * capped + (1 - costs_.capped_edges) * piece_time);
  }
  const auto transfers = static_cast<Time>(piece_time * static_cast<double>(ring.steps + ring.phases * (ring.pieces - 1)));
  const Time chained = started + transfers + static_cast<Time>(ring.steps) * (timing.mean_edge_delay + costs_.step_sync);
  end_ = std::max({end_, now + costs_.step_sync, chained});
  if (++delivered_ == rings_->size()) network_->partition(0).schedule_at(*this, end_);
}

void CoupledRing::on_message_started(MessageId id, Time now) {
  if (const int r = ring_of(id); r >= 0) started_[static_cast<std::size_t>(r)] = now;
}

void CoupledRing::on_message_finished(MessageId id, Time) {
  if (ring_of(id) >= 0) ++finished_;
}

}  // namespace fabricsim
