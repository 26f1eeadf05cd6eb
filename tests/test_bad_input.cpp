// Bad input found by hand and by fuzzing (issue 16): each is a clear error, never a wrong
// answer, a crash or exit code 1.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "app/config/config_error.h"
#include "app/config/config_loader.h"
#include "app/output/results.h"
#include "app/scenario/scenario.h"
#include "test_support.h"
#include "workloads/traces/trace.h"

using namespace fabricsim;

namespace {

const char* kTwoHosts = R"(
topology:
  kind: custom
  hosts: [a, b]
  switches: [s]
  links: [{a: a, b: s, bandwidth: 100Gbps}, {a: b, b: s, bandwidth: 100Gbps}]
)";

std::string config_error(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    load_config_text(text, "bad", sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::string trace_error(const std::string& ops) {
  try {
    const Trace t = parse_trace(std::string(R"({"fabricsim_trace": 1, "ranks": 2, "achieved_tflops": 100})") + "\n" + ops, "t.jsonl");
    const std::string problem = check_trace(t);
    return problem.empty() ? "no error" : problem;
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("a key given twice in one map is refused at the second, not silently ignored") {
  const std::string e = config_error(std::string(kTwoHosts) + "network:\n  mtu: 4KiB\n  mtu: 9000\n");
  CHECK(e.find("bad:9:3") != std::string::npos);
  CHECK(e.find("network.mtu: this key appears twice") != std::string::npos);
}

TEST_CASE("--set with an item number too large to be one is a located error") {
  const std::string e = config_error(std::string(kTwoHosts) + "messages: [{src: a, dst: b, bytes: 1}]\n",
                                     {"messages[99999999999999999999].bytes=1"});
  CHECK(e.find("expected an item number below 1") != std::string::npos);
}

TEST_CASE("trace numbers out of range are refused, not turned into wrong times or sizes") {
  for (const char* d : {"NaN", "-5", "1e300"}) {
    CAPTURE(d);
    const std::string e = trace_error(std::string(R"({"rank": 0, "id": 0, "kind": "compute", "duration_us": )") + d + "}\n");
    CHECK(e.find("\"duration_us\" should be a number from") != std::string::npos);
  }
  for (const char* b : {"-1", "0", "1e30"}) {
    CAPTURE(b);
    std::string ops;
    for (int r = 0; r < 2; ++r) {
      ops += R"({"rank": )" + std::to_string(r) + R"(, "id": 0, "kind": "collective", "op": "all_reduce", "bytes": )" + b +
             R"(, "key": "k", "group": [0, 1]})" + "\n";
    }
    CHECK(trace_error(ops).find("\"bytes\" should be a number from") != std::string::npos);
  }
}

TEST_CASE("a trace whose send and receive disagree, or whose ranks disagree on a collective, is refused") {
  CHECK(trace_error(R"({"rank": 0, "id": 0, "kind": "send", "peer": 1, "bytes": 100}
{"rank": 1, "id": 0, "kind": "recv", "peer": 0, "bytes": 200}
)")
            .find("is 100 bytes, its receive 200") != std::string::npos);
  CHECK(trace_error(R"({"rank": 0, "id": 0, "kind": "collective", "op": "all_reduce", "bytes": 100, "key": "k", "group": [0, 1]}
{"rank": 1, "id": 0, "kind": "collective", "op": "all_reduce", "bytes": 200, "key": "k", "group": [0, 1]}
)")
            .find("different operation or size") != std::string::npos);
}

TEST_CASE("a trace with a dependency cycle is refused before it runs") {
  CHECK(trace_error(R"({"rank": 0, "id": 0, "kind": "compute", "duration_us": 1, "deps": [1]}
{"rank": 0, "id": 1, "kind": "compute", "duration_us": 1, "deps": [0]}
)")
            .find("dependency cycle") != std::string::npos);
}

TEST_CASE("results.json has each top-level key once (switches: the count, switch_buffers: per switch)") {
  ScenarioRun run(load_config_text(std::string(kTwoHosts) + R"(
network: {buffer: {size: 1MiB}, pfc: {}}
messages: [{src: a, dst: b, bytes: 64KiB}]
)",
                                   "buffers"));
  run.run();
  const std::string json = results_json(run);
  std::size_t count = 0;
  for (std::size_t at = json.find("\"switches\":"); at != std::string::npos; at = json.find("\"switches\":", at + 1)) ++count;
  CHECK(count == 1);
  CHECK(json.find("\"switch_buffers\":") != std::string::npos);
}

TEST_CASE("watching queues does not change the run: sim time and utilization with and without sampling") {
  const auto summary = [](const std::string& extra) {
    ScenarioRun run(load_config_text(fat_tree_k4_yaml() + "network: {buffer: {size: 1MiB}, pfc: {}" + extra + R"(}
workload: {kind: permutation, bytes: 256KiB}
)",
                                     "sampled"));
    run.run();
    std::string json = results_json(run);
    // Everything but the config itself (the keys before the seed), the samples (the last
    // key) and the wall times.
    json = json.substr(json.find("\"seed\""));
    json = json.substr(0, json.find("\"queue_samples\""));
    while (!json.empty() && (json.back() == ',' || json.back() == '}' || json.back() == ' ' || json.back() == '\n')) json.pop_back();
    const auto cut = [&](const std::string& key) {
      const auto at = json.find("\"" + key + "\"");
      if (at != std::string::npos) json.erase(at, json.find(',', at) - at);
    };
    cut("wall_seconds");
    cut("setup_wall_seconds");
    return std::make_pair(run.sim_time(), json);
  };
  const auto plain = summary("");
  const auto sampled = summary(", queue_sample_interval: 3us");
  CHECK(plain.first == sampled.first);
  CHECK(plain.second == sampled.second);
}
