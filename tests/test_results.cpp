#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "app/config/config_loader.h"
#include "app/output/json_writer.h"
#include "app/output/results.h"
#include "app/scenario/scenario.h"
#include "test_support.h"

using namespace fabricsim;

namespace {
std::string without_wall_seconds(const std::string& json) {
  std::istringstream in(json);
  std::string line, out;
  while (std::getline(in, line)) {
    // The wall times (wall_seconds, setup_wall_seconds) are the only keys allowed to differ.
    if (line.find("wall_seconds\"") == std::string::npos) out += line + "\n";
  }
  return out;
}

// A small leaf/spine with six messages (the built-in default is a long collective sweep).
constexpr const char* kSmall = R"(
name: small
topology:
  kind: leaf_spine
  leaves: 2
  spines: 2
  hosts_per_leaf: 4
  host_link: {bandwidth: 400Gbps, latency: 500ns}
  fabric_link: {bandwidth: 400Gbps, latency: 500ns}
messages:
  - {src: h0, dst: h4, bytes: 4MiB}
  - {src: h1, dst: h5, bytes: 4MiB}
  - {src: h2, dst: h6, bytes: 4MiB}
  - {src: h3, dst: h7, bytes: 4MiB}
  - {src: h4, dst: h0, bytes: 1MiB, start: 5us}
  - {src: h5, dst: h0, bytes: 1MiB, start: 5us}
)";

std::string run_small(std::uint64_t seed) {
  ScenarioConfig c = load_config_text(kSmall, "small");
  c.seed = seed;
  ScenarioRun run(std::move(c));
  run.run();
  return results_json(run);
}
}  // namespace

TEST_CASE("same config and seed give byte-identical results except wall_seconds") {
  const std::string a = run_small(1), b = run_small(1);
  CHECK(a != b);  // wall_seconds differs (almost surely)...
  CHECK(without_wall_seconds(a) == without_wall_seconds(b));  // ...and nothing else does
}

TEST_CASE("results.json carries the run and link records, message records stream to their own file") {
  const std::string json = run_small(1);
  for (const char* key : {"\"config_name\": \"small\"", "\"seed\": 1", "\"complete\": true", "\"sim_time_ps\": ",
                          "\"events\": ", "\"wall_seconds\": ", "\"messages_total\": 6", "\"messages_finished\": 6",
                          "\"utilization\": ", "\"max_queue_bytes\": ", "\"drops\": 0"}) {
    CAPTURE(key);
    CHECK(json.find(key) != std::string::npos);
  }
  CHECK(json.find("\"start_ps\"") == std::string::npos);  // no per-message records in results.json

  const auto dir = test_temp_path("fabricsim_records_test");
  std::filesystem::remove_all(dir);
  {
    ScenarioRun run(load_config_text(kSmall, "small"));
    run.message_log().record_to((dir / "messages.jsonl").string());
    CHECK(std::filesystem::exists(dir / "messages.jsonl.partial"));  // streamed while the run goes
    run.run();
    run.message_log().finish_records();
  }
  std::ifstream in(dir / "messages.jsonl");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 6);  // one per message, in finishing order
  std::size_t h5_to_h0 = 0;
  for (const std::string& l : lines) h5_to_h0 += l.find("\"source\":\"h5\",\"destination\":\"h0\",\"bytes\":1048576") != std::string::npos &&
                                                l.find("\"start_ps\":5000000,") != std::string::npos;
  CHECK(h5_to_h0 == 1);
  CHECK(!std::filesystem::exists(dir / "messages.jsonl.partial"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("counters list every field once, and results.json writes each by that list") {
  // A field left out of for_each_field would never be summed or written: every field is
  // eight bytes, so the list covers the struct exactly when it names sizeof / 8 fields.
  std::size_t nic_fields = 0, switch_fields = 0;
  NicCounters nic;
  SwitchCounters sw;
  NicCounters::for_each_field([&](const CounterField&, auto&) { ++nic_fields; }, nic);
  SwitchCounters::for_each_field([&](const CounterField&, auto&) { ++switch_fields; }, sw);
  std::size_t class_fields = 0;
  ClassCounters traffic_class;
  ClassCounters::for_each_field([&](const CounterField&, auto&) { ++class_fields; }, traffic_class);
  CHECK(nic_fields * 8 == sizeof(NicCounters));
  CHECK(switch_fields * 8 == sizeof(SwitchCounters));
  CHECK(class_fields * 8 == sizeof(ClassCounters));

  // A port's total over its classes: sums, but times the classes spend side by side and
  // high-water marks take the larger (class 0 paused 5 us, class 1 paused 3 us at once).
  ClassCounters port, c0, c1;
  c0.bytes_sent = 4096, c1.bytes_sent = 1024;
  c0.paused_time = us(5), c1.paused_time = us(3);
  c0.max_queue_bytes = 10, c1.max_queue_bytes = 30;
  add_class_counters(port, c0);
  add_class_counters(port, c1);
  CHECK(port.bytes_sent == 5120);
  CHECK(port.paused_time == us(5));
  CHECK(port.max_queue_bytes == 30);

  // Summing: sums, but a high-water mark takes the larger.
  SwitchCounters a, b;
  a.buffer_drops = 3;
  a.max_buffer_bytes = 100;
  b.buffer_drops = 4;
  b.max_buffer_bytes = 70;
  add_counters(a, b);
  CHECK(a.buffer_drops == 7);
  CHECK(a.max_buffer_bytes == 100);

  // Hand counts for the small leaf/spine: four 4 MiB and two 1 MiB messages, 4 KiB
  // packets, nothing lost.
  const YAML::Node r = YAML::Load(run_small(1));
  const YAML::Node e = r["endpoints"];
  NicCounters::for_each_field([&](const CounterField& f, auto&) { CHECK_MESSAGE(e[f.name], f.name); }, nic);
  SwitchCounters::for_each_field([&](const CounterField& f, auto&) { CHECK_MESSAGE(r["switch_counters"][f.name], f.name); }, sw);
  // Every link, each field its port's counters declare (credit waits: none here, an
  // Ethernet fabric).
  for (const YAML::Node& link : r["links"]) {
    ClassCounters::for_each_field([&](const CounterField& f, auto&) { CHECK_MESSAGE(bool(link[f.name]) != f.credit_only, f.name); },
                                  traffic_class);
  }
  CHECK(e["payload_bytes_received"].as<std::uint64_t>() == 4 * 4194304ull + 2 * 1048576ull);
  CHECK(e["data_packets_received"].as<std::uint64_t>() == 4 * 1024 + 2 * 256);
  CHECK(e["data_packets_sent"].as<std::uint64_t>() == 4 * 1024 + 2 * 256);
  CHECK(e["messages_finished"].as<std::uint64_t>() == 6);
  CHECK(e["retransmitted_packets"].as<std::uint64_t>() == 0);
  CHECK(r["switch_counters"]["unroutable"].as<std::uint64_t>() == 0);
}

TEST_CASE("two simulations in one process give the same results as one alone") {
  ScenarioConfig c = load_config_text(kSmall, "small");
  ScenarioRun a(c), b(c);
  a.run();
  b.run();
  CHECK(without_wall_seconds(results_json(a)) == without_wall_seconds(results_json(b)));
}

TEST_CASE("json writer escapes strings and nests") {
  JsonWriter j;
  j.begin_object().key("a\"b").value("x\ny").key("list").begin_array().value(1).value(2.5).value(true).end_array();
  j.key("empty").begin_object().end_object().end_object();
  CHECK(j.str() == "{\n  \"a\\\"b\": \"x\\ny\",\n  \"list\": [\n    1,\n    2.5,\n    true\n  ],\n  \"empty\": {}\n}\n");
}

TEST_CASE("json writer with a sink streams the same text, holding at most about a spill's worth") {
  // An array of 300,000 integers: "[" then "\n  i" for each, comma-separated, then "\n]",
  // over 2 MiB in all, so it spills to the sink at least twice.
  std::string expected = "[";
  for (int i = 0; i < 300000; ++i) expected += (i == 0 ? "" : ",") + std::string("\n  ") + std::to_string(i);
  expected += "\n]";
  std::ostringstream sink;
  JsonWriter j(sink);
  std::size_t most_held = 0;
  j.begin_array();
  for (int i = 0; i < 300000; ++i) {
    j.value(i);
    most_held = std::max(most_held, j.str().size());
  }
  j.end_array();
  j.flush();
  CHECK(j.str().empty());
  CHECK(sink.str() == expected);
  CHECK(expected.size() > 2 * JsonWriter::kSpillBytes);
  CHECK(most_held <= JsonWriter::kSpillBytes + 16);
}

TEST_CASE("a streamed atomic write that fails leaves neither the file nor a temporary") {
  const auto dir = test_temp_path("fabricsim_atomic_fail_test");
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "r.json").string();
  CHECK_THROWS_AS(write_file_atomically(path, [](std::ostream& out) {
                    out << "half";
                    throw std::runtime_error("stopped");
                  }),
                  std::runtime_error);
  CHECK_FALSE(std::filesystem::exists(path));
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("atomic write leaves the whole file and no temporary behind") {
  const auto dir = test_temp_path("fabricsim_atomic_test");
  std::filesystem::remove_all(dir);
  write_file_atomically((dir / "sub" / "r.json").string(), "hello");
  std::ifstream in(dir / "sub" / "r.json");
  std::string s;
  std::getline(in, s);
  CHECK(s == "hello");
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir / "sub")) ++files;
  CHECK(files == 1);
  std::filesystem::remove_all(dir);
}
