#include "app/output/topology_json.h"

#include "app/output/json_writer.h"

namespace fabricsim {

std::string topology_json(const std::string& config_name, const TopologySummary& s) {
  JsonWriter j;
  j.begin_object();
  j.key("config_name").value(config_name);
  j.key("endpoints").value(static_cast<std::uint64_t>(s.endpoints));
  j.key("gpus").value(static_cast<std::uint64_t>(s.gpus));
  j.key("switches").value(static_cast<std::uint64_t>(s.switches));
  j.key("nics").value(static_cast<std::uint64_t>(s.nics));
  j.key("links").value(static_cast<std::uint64_t>(s.links));
  j.key("nodes_by_role").begin_object();
  for (const auto& [role, n] : s.nodes_by_role) j.key(role).value(static_cast<std::uint64_t>(n));
  j.end_object();
  j.key("links_by_tier").begin_object();
  for (const auto& [tier, n] : s.links_by_tier) j.key(tier).value(static_cast<std::uint64_t>(n));
  j.end_object();
  j.key("diameter_hops").value(s.diameter_hops);
  j.key("switch_diameter_hops").value(s.switch_diameter_hops);
  j.key("bisection_bandwidth_gbps").value(s.bisection_bandwidth_bps * 1e-9);
  j.end_object();
  return j.str();
}

}  // namespace fabricsim
