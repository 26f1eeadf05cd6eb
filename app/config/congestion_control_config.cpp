#include "app/config/congestion_control_config.h"

#include <string>

#include "sim/endpoint/cc/dcqcn.h"
#include "sim/endpoint/cc/hpcc.h"

namespace fabricsim {
namespace {

double rate_bps(MapReader& m, const char* key, double fallback) {
  return static_cast<double>(m.bandwidth(key, Bandwidth{static_cast<std::int64_t>(fallback)}).bits_per_second);
}

Time positive_time(MapReader& m, const char* key, Time fallback) {
  const Time t = m.time(key, fallback);
  if (t <= 0) m.context().fail(m.node()[key], m.child_path(key), "expected a time above zero");
  return t;
}

std::shared_ptr<const CongestionControl> read_dcqcn(MapReader& m, const MapReader& network, const EcnConfig& ecn) {
  if (!ecn.enabled) network.context().fail(m.node(), m.path(), "expected an `ecn` section too: DCQCN reacts to ECN marks");
  DcqcnConfig d;
  d.cnp_interval = positive_time(m, "cnp_interval", d.cnp_interval);
  d.g = m.real("g", 1e-6, 1, d.g);
  d.alpha_timer = positive_time(m, "alpha_timer", d.alpha_timer);
  d.rate_increase_timer = positive_time(m, "rate_increase_timer", d.rate_increase_timer);
  d.byte_counter = m.bytes("byte_counter", 0, INT64_C(1) << 40, d.byte_counter);
  d.fast_recovery_rounds = static_cast<int>(m.integer("fast_recovery_rounds", 1, 100, d.fast_recovery_rounds));
  d.additive_increase_bps = rate_bps(m, "additive_increase", d.additive_increase_bps);
  d.hyper_increase_bps = rate_bps(m, "hyper_increase", d.hyper_increase_bps);
  d.min_rate_bps = rate_bps(m, "min_rate", d.min_rate_bps);
  d.clamp_target_rate = m.boolean("clamp_target_rate", d.clamp_target_rate);
  return std::make_shared<Dcqcn>(d);
}

std::shared_ptr<const CongestionControl> read_hpcc(MapReader& m, const MapReader& /*network*/, const EcnConfig& /*ecn*/) {
  HpccConfig h;
  h.eta = m.real("eta", 0.01, 1, h.eta);
  h.max_stage = static_cast<int>(m.integer("max_stage", 0, 1000, h.max_stage));
  h.additive_increase_bps = rate_bps(m, "additive_increase", h.additive_increase_bps);
  h.min_rate_bps = rate_bps(m, "min_rate", h.min_rate_bps);
  h.base_rtt = m.time("base_rtt", h.base_rtt);
  if (h.base_rtt < 0) m.context().fail(m.node()["base_rtt"], m.child_path("base_rtt"), "expected a time of zero (measured) or more");
  return std::make_shared<Hpcc>(h);
}

struct Scheme {
  const char* section;
  std::shared_ptr<const CongestionControl> (*read)(MapReader&, const MapReader&, const EcnConfig&);
};

// One line per scheme.
constexpr Scheme kSchemes[] = {
    {"dcqcn", read_dcqcn},
    {"hpcc", read_hpcc},
};

}  // namespace

std::shared_ptr<const CongestionControl> read_congestion_control(MapReader& network, const EcnConfig& ecn) {
  std::shared_ptr<const CongestionControl> chosen;
  std::string chosen_section;
  for (const Scheme& s : kSchemes) {
    MapReader section = network.map(s.section, false);
    if (network.has(s.section) && section.boolean("enabled", true)) {
      if (chosen) {
        network.context().fail(network.node()[s.section], network.child_path(s.section),
                               "expected one congestion-control section, but `" + chosen_section + "` is on too");
      }
      chosen = s.read(section, network, ecn);
      chosen_section = s.section;
    }
    section.finish();
  }
  return chosen;
}

}  // namespace fabricsim
