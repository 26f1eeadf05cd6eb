// The progress watchdog: a run whose simulated time stands still, or that delivers
// nothing while started messages wait, is stopped after a bounded number of events with a
// diagnosis naming what kept the event queue busy and the messages left.
#include <doctest/doctest.h>

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
