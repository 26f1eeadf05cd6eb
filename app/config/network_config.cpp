#include "app/config/network_config.h"

#include "app/config/congestion_control_config.h"
#include "workloads/collectives/nccl_tuning.h"

namespace fabricsim {
namespace {

// A section is on when present, unless `enabled: false`.
bool section_on(const MapReader& parent, const char* key, MapReader& section) {
  return parent.has(key) && section.boolean("enabled", true);
}

void read_lossless(MapReader& m, NetworkConfig& n) {
  LosslessConfig& l = n.lossless;
  MapReader buffer = m.map("buffer", false);
  if (section_on(m, "buffer", buffer)) {
    l.shared_buffer = true;
    l.buffer.size_bytes = buffer.bytes("size", 1, INT64_C(1) << 40, l.buffer.size_bytes);
    l.buffer.reserve_bytes = buffer.bytes("reserve", 0, INT64_C(1) << 30, 0);
    l.buffer.alpha = buffer.real("alpha", 1.0 / 1024, 1024, l.buffer.alpha);
    l.buffer.headroom_bytes = buffer.bytes("headroom", 0, INT64_C(1) << 30, 0);
    l.buffer.xon_offset_bytes = buffer.bytes("xon_offset", 0, INT64_C(1) << 30, 0);
  }
  buffer.finish();
  MapReader pfc = m.map("pfc", false);
  if (section_on(m, "pfc", pfc)) {
    if (!l.shared_buffer) m.context().fail(m.node()["pfc"], m.child_path("pfc"), "expected a `buffer` section too: PFC works on the shared buffer's accounting");
    if (pfc.has("classes")) {
      for (std::int64_t c : pfc.integer_list("classes", 0, n.traffic_classes - 1, true)) l.pfc_classes_mask |= static_cast<std::uint8_t>(1u << c);
    } else {
      pfc.integer_list("classes", 0, 7, false);
      l.pfc_classes_mask = static_cast<std::uint8_t>((1u << n.traffic_classes) - 1);  // every class
    }
  }
  pfc.finish();
  MapReader ecn = m.map("ecn", false);
  if (section_on(m, "ecn", ecn)) {
    l.ecn.enabled = true;
    l.ecn.kmin_bytes = ecn.bytes("kmin", 0, INT64_C(1) << 40, l.ecn.kmin_bytes);
    l.ecn.kmax_bytes = ecn.bytes("kmax", 1, INT64_C(1) << 40, l.ecn.kmax_bytes);
    if (l.ecn.kmax_bytes <= l.ecn.kmin_bytes) {
      m.context().fail(m.node()["ecn"]["kmax"].IsDefined() ? m.node()["ecn"]["kmax"] : m.node()["ecn"], ecn.child_path("kmax"),
                       "expected kmax above kmin (" + std::to_string(l.ecn.kmin_bytes) + " bytes)");
    }
    l.ecn.pmax = ecn.real("pmax", 0, 1, l.ecn.pmax);
    l.ecn.mark_on_dequeue = ecn.choice<bool>("mark_on", {{"enqueue", false}, {"dequeue", true}}, false);
    // Per-port-speed thresholds: each entry overrides kmin/kmax/pmax for ports of its speed.
    const YAML::Node speeds = ecn.sequence("by_speed", false);
    for (std::size_t i = 0; i < speeds.size(); ++i) {
      MapReader e(ecn.context(), speeds[i], ecn.child_path("by_speed") + "[" + std::to_string(i) + "]");
      EcnForSpeed entry{e.bandwidth("bandwidth").bits_per_second, l.ecn};
      entry.ecn.kmin_bytes = e.bytes("kmin", 0, INT64_C(1) << 40, l.ecn.kmin_bytes);
      entry.ecn.kmax_bytes = e.bytes("kmax", 1, INT64_C(1) << 40, l.ecn.kmax_bytes);
      entry.ecn.pmax = e.real("pmax", 0, 1, l.ecn.pmax);
      if (entry.ecn.kmax_bytes <= entry.ecn.kmin_bytes) {
        e.context().fail(speeds[i]["kmax"].IsDefined() ? speeds[i]["kmax"] : speeds[i], e.child_path("kmax"),
                         "expected kmax above kmin (" + std::to_string(entry.ecn.kmin_bytes) + " bytes)");
      }
      for (const EcnForSpeed& other : l.ecn_by_speed) {
        if (other.bits_per_second == entry.bits_per_second) {
          e.context().fail(speeds[i]["bandwidth"], e.child_path("bandwidth"), "expected a speed not listed before");
        }
      }
      e.finish();
      l.ecn_by_speed.push_back(entry);
    }
  }
  ecn.finish();
  l.congestion_control = read_congestion_control(m, l.ecn);
  n.nic.retransmit_timeout = m.time("retransmit_timeout", n.nic.retransmit_timeout);
  if (n.nic.retransmit_timeout <= 0) m.context().fail(m.node()["retransmit_timeout"], m.child_path("retransmit_timeout"), "expected a time above zero");
  n.nic.nack_interval = m.time("nack_interval", n.nic.nack_interval);
  l.dateline = m.boolean("dateline", false);
  if (l.dateline && n.traffic_classes < 2) {
    m.context().fail(m.node()["dateline"], m.child_path("dateline"), "expected traffic_classes >= 2: datelines use classes 0 and 1");
  }
  l.deadlock_check_interval = m.time("deadlock_check_interval", l.deadlock_check_interval);
  l.queue_sample_interval = m.time("queue_sample_interval", 0);
}

}  // namespace

NetworkConfig read_network(MapReader m) {
  NetworkConfig n;
  NicConfig& nic = n.nic;
  nic.mtu = static_cast<std::uint32_t>(m.bytes("mtu", 1, 1 << 20, nic.mtu));
  nic.header_bytes = static_cast<std::uint32_t>(m.bytes("header_bytes", 0, 4096, nic.header_bytes));
  nic.ack_bytes = static_cast<std::uint32_t>(m.bytes("ack_bytes", 1, 4096, nic.ack_bytes));
  nic.ack_interval = static_cast<std::uint32_t>(m.integer("ack_interval", 1, 1 << 20, nic.ack_interval));
  nic.fetch_window_bytes = static_cast<std::uint32_t>(m.bytes("fetch_window", 1, INT64_C(1) << 30, nic.fetch_window_bytes));
  if (nic.fetch_window_bytes < nic.mtu) {
    m.context().fail(m.node()["fetch_window"], m.child_path("fetch_window"),
                     "expected at least one packet's payload (mtu = " + std::to_string(nic.mtu) + " B)");
  }
  n.traffic_classes = static_cast<int>(m.integer("traffic_classes", 1, 8, n.traffic_classes));
  nic.ack_traffic_class =
      static_cast<std::uint8_t>(m.integer("ack_traffic_class", 0, n.traffic_classes - 1, n.traffic_classes - 1));
  n.queue_capacity = m.bytes("queue_capacity", 1, INT64_C(1) << 40, n.queue_capacity);
  if (n.queue_capacity < std::int64_t{nic.mtu} + nic.header_bytes) {
    m.context().fail(m.node()["queue_capacity"], m.child_path("queue_capacity"),
                     "expected at least one full packet (mtu + header_bytes = " +
                         std::to_string(std::int64_t{nic.mtu} + nic.header_bytes) + " bytes)");
  }
  read_lossless(m, n);
  n.load_balancing = m.choice<LoadBalancing>(
      "load_balancing",
      {{"ecmp", LoadBalancing::kEcmp}, {"spray", LoadBalancing::kSpray}, {"adaptive", LoadBalancing::kAdaptive}},
      LoadBalancing::kEcmp);
  n.fidelity = m.choice<NetworkConfig::Fidelity>(
      "fidelity", {{"packet", NetworkConfig::Fidelity::kPacket}, {"flow", NetworkConfig::Fidelity::kFlow}},
      NetworkConfig::Fidelity::kPacket);
  n.flow_rate_interval = m.time("flow_rate_interval", 0);
  n.flow_rings = m.choice<NetworkConfig::FlowRings>(
      "flow_rings",
      {{"steps", NetworkConfig::FlowRings::kSteps}, {"in_node", NetworkConfig::FlowRings::kInNode},
       {"coupled", NetworkConfig::FlowRings::kCoupled}},
      NetworkConfig{}.flow_rings);
  if (m.has("nccl_version")) {
    const std::string v = m.string("nccl_version");
    if (!nccl_rules(v)) {
      std::string known;
      for (const auto& k : nccl_rule_versions()) known += (known.empty() ? "" : ", ") + k;
      m.context().fail(m.node()["nccl_version"], m.child_path("nccl_version"),
                       "expected an NCCL release from 2.18 on (rule sets: " + known + "), got '" + v + "'");
    }
    n.nccl_version = nccl_rules(v)->version;
  }
  n.cpu = m.choice<NcclCpu>("cpu", {{"intel", NcclCpu::kIntel}, {"amd", NcclCpu::kAmd}, {"arm", NcclCpu::kArm}}, n.cpu);
  // NCCL takes any positive count and caps it at MAXCHANNELS (64 from 2.25, 32 before).
  n.nccl_min_ctas = static_cast<int>(m.integer("nccl_min_ctas", 1, 64, n.nccl_min_ctas));
  n.nccl_max_ctas = static_cast<int>(m.integer("nccl_max_ctas", 1, 64, n.nccl_max_ctas));
  n.nccl_qps_per_connection = static_cast<int>(m.integer("nccl_qps_per_connection", 1, 128, n.nccl_qps_per_connection));
  // NCCL_BUFFSIZE: Simple's buffer, 8 steps of it a channel's pieces (at least 8 KiB a step).
  n.nccl_buffsize = m.bytes("nccl_buffsize", 64 * 1024, INT64_C(1) << 30, n.nccl_buffsize);
  m.finish();
  return n;
}

}  // namespace fabricsim
