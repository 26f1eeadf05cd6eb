// A run's progress: its reports come between chunks of events, the first after 65,536
// events, and where the chunks end does not change the run; its watchdog stops a run
// whose simulated time stands still, or that delivers nothing while started messages
// wait, after a bounded number of events with a diagnosis naming what kept the event
// queue busy and the messages left.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "app/config/config_loader.h"
#include "app/scenario/scenario.h"
#include "test_support.h"

using namespace fabricsim;

namespace {

// a - s - b, 100G and 1 us a link: one 1 MiB message needs 2 us before its first byte lands.
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
  - {src: a, dst: b, bytes: 1MiB}
)";

// An event handler that never lets go: it reschedules itself `step` later for ever.
struct Spinner final : EventHandler {
  Simulator* sim = nullptr;
  Time step = 0;
  std::uint64_t fired = 0;
  void on_event() override {
    ++fired;
    sim->schedule_in(*this, step);
  }
};

}  // namespace

TEST_CASE("a run whose simulated time stands still is stopped after stop.frozen_events, naming the spinner") {
  ScenarioRun run(load_config_text(std::string(kPair) + "stop: {frozen_events: 40000, undelivered_events: 0}\n", "frozen"));
  Spinner spinner;
  spinner.sim = &run.monitor_clock();
  run.monitor_clock().schedule_at(spinner, us(1));  // at 1 us, before the message is through
  run.run();
  REQUIRE(run.stop_reason() == StopReason::kNoProgress);
  CHECK_FALSE(run.complete());
  // Checked every quarter of the limit: caught within 40,000 + 10,000 events at 1 us, and
  // then watched for 200,000 more to name who spins.
  CHECK(spinner.fired >= 40000);
  CHECK(spinner.fired <= 50000 + 200000);
  const NoProgress& stuck = *run.no_progress();
  CHECK(stuck.at == us(1));
  CHECK(stuck.reason.find("simulated time has stood at 1.000 us") != std::string::npos);
  REQUIRE_FALSE(stuck.spinning.empty());
  CHECK(stuck.spinning[0].find("100.0% of events: a workload's event handler") == 0);
  CHECK(stuck.messages_left == 1);
  REQUIRE(stuck.messages.size() == 1);
  CHECK(stuck.messages[0].find("message 0 a -> b, 1048576 B, posted at 0 ps, not delivered") == 0);
}

TEST_CASE("a run that delivers nothing while a message waits is stopped after stop.undelivered_events") {
  // The spinner steps 1 ps an event: 5,000 events are 5 ns, long before the first byte
  // can land (2 us), so the message waits with nothing delivered.
  ScenarioRun run(load_config_text(std::string(kPair) + "stop: {frozen_events: 0, undelivered_events: 5000}\n", "undelivered"));
  Spinner spinner;
  spinner.sim = &run.monitor_clock();
  spinner.step = 1;
  run.monitor_clock().schedule_at(spinner, 0);
  run.run();
  REQUIRE(run.stop_reason() == StopReason::kNoProgress);
  CHECK(run.no_progress()->reason.find("no payload byte delivered over") == 0);
  CHECK(run.no_progress()->messages_left == 1);
}

TEST_CASE("the watchdog leaves a run that makes progress alone") {
  // The defaults, and limits tight enough to catch a real stall of this message: it is
  // delivering all along, and time moves on every event or so.
  for (const char* stop : {"", "stop: {frozen_events: 100, undelivered_events: 400}\n"}) {
    ScenarioRun run(load_config_text(std::string(kPair) + stop, "moving"));
    run.run();
    CHECK(run.complete());
    CHECK(run.stop_reason() == StopReason::kQueueEmpty);
    CHECK_FALSE(run.no_progress());
  }
}

TEST_CASE("progress is first reported after 65,536 events, and reporting leaves the run as it was") {
  // The pair with a 256 MiB message: 65,536 packets of 4 KiB, each several events.
  std::string yaml = kPair;
  yaml.replace(yaml.find("bytes: 1MiB"), 11, "bytes: 256MiB");
  ScenarioRun quiet(load_config_text(yaml, "quiet"));
  quiet.run();
  REQUIRE(quiet.complete());
  REQUIRE(quiet.events() > 2 * 65'536);

  ScenarioRun watched(load_config_text(yaml, "watched"));
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
