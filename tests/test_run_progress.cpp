// A run's progress reports: between chunks of events, the first after 65,536 events
// (whatever the events cost), and where the chunks end does not change the run.
#include <doctest/doctest.h>

#include <vector>

#include "app/config/config_loader.h"
#include "app/scenario/scenario.h"

using namespace fabricsim;

namespace {

// a - s - b, 100G and 1 us a link, one 256 MiB message in 4 KiB packets: 65,536 packets,
// each several events, so the run holds a few chunks.
const char* kPair = R"(
topology:
  kind: custom
  hosts: [a, b]
  switches: [s]
  links:
    - {a: a, b: s, bandwidth: 100Gbps, latency: 1us}
    - {a: s, b: b, bandwidth: 100Gbps, latency: 1us}
network: {mtu: 4KiB}
messages:
  - {src: a, dst: b, bytes: 256MiB}
)";

}  // namespace

TEST_CASE("progress is first reported after 65,536 events, and reporting leaves the run as it was") {
  ScenarioRun quiet(load_config_text(kPair, "quiet"));
  quiet.run();
  REQUIRE(quiet.complete());
  REQUIRE(quiet.events() > 2 * 65'536);

  ScenarioRun watched(load_config_text(kPair, "watched"));
  std::vector<Progress> reports;
  watched.run([&](const Progress& p) { reports.push_back(p); });
  REQUIRE(watched.complete());
  REQUIRE_FALSE(reports.empty());
  CHECK(reports.front().events == 65'536);
  for (std::size_t i = 1; i < reports.size(); ++i) {
    CHECK(reports[i].events > reports[i - 1].events);
    CHECK(reports[i].events - reports[i - 1].events <= 4'000'000);
    CHECK(reports[i].sim_time >= reports[i - 1].sim_time);
  }
  CHECK(reports.back().events < watched.events());
  // The same run: its events, its end and its message's delivery.
  CHECK(watched.events() == quiet.events());
  CHECK(watched.sim_time() == quiet.sim_time());
  CHECK(watched.network().messages()[0].delivered == quiet.network().messages()[0].delivered);
}
