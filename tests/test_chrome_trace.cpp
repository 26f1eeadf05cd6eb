// The Chrome trace timeline (`run --trace`): slices where the hand count puts them,
// tracks whose slices never cross, bounds kept, and a run that is the same observed or not.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

#include "app/output/chrome_trace.h"
#include "app/config/config_loader.h"
#include "app/output/results.h"
#include "app/scenario/scenario.h"
#include "test_support.h"

using namespace fabricsim;

namespace {

struct Slice {
  int pid, tid;
  double ts, dur;  // microseconds
  std::string name;
};

struct Recorded {
  std::vector<Slice> slices;
  std::map<std::pair<int, int>, std::string> thread_names;
  std::string text;
  std::int64_t written = 0, dropped = 0;
  std::string results;  // results.json without wall times
};

std::string without_wall_times(const std::string& json) {
  std::istringstream in(json);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find("wall_seconds\"") == std::string::npos) out += line + "\n";
  }
  return out;
}

Recorded record(const std::string& yaml, ChromeTraceOptions options = {}, int threads = 0) {
  const auto path = test_temp_path("fabricsim_chrome_trace_test.json");
  options.path = path.string();
  ScenarioConfig config = load_config_text(yaml, "<test>");
  config.threads = threads;
  ScenarioRun run(std::move(config));
  Recorded r;
  {
    ChromeTraceRecorder recorder(options, run);
    recorder.start();
    run.run();
    recorder.finish();
    r.written = recorder.events_written();
    r.dropped = recorder.events_dropped();
  }
  REQUIRE(run.complete());
  r.results = without_wall_times(results_json(run));
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  r.text = buf.str();
  const std::regex slice(R"re(\{"ph":"X","pid":(\d+),"tid":(\d+),"ts":([0-9.]+),"dur":([0-9.]+),"name":"([^"]*)")re");
  const std::regex thread(R"re(\{"ph":"M","name":"thread_name","pid":(\d+),"tid":(\d+),"args":\{"name":"([^"]*)")re");
  std::istringstream lines(r.text);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, slice)) {
      r.slices.push_back({std::stoi(m[1]), std::stoi(m[2]), std::stod(m[3]), std::stod(m[4]), m[5]});
    } else if (std::regex_search(line, m, thread)) {
      r.thread_names[{std::stoi(m[1]), std::stoi(m[2])}] = m[3];
    }
  }
  std::filesystem::remove(path);
  return r;
}

// On every track, each slice either ends before the next begins or contains it.
void check_nesting(const std::vector<Slice>& slices) {
  std::map<std::pair<int, int>, std::vector<Slice>> tracks;
  for (const Slice& s : slices) tracks[{s.pid, s.tid}].push_back(s);
  for (auto& [track, items] : tracks) {
    std::sort(items.begin(), items.end(), [](const Slice& a, const Slice& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.ts + a.dur > b.ts + b.dur;
    });
    std::vector<double> open_ends;
    for (const Slice& s : items) {
      while (!open_ends.empty() && open_ends.back() <= s.ts + 1e-6) open_ends.pop_back();
      if (!open_ends.empty()) CHECK(s.ts + s.dur <= open_ends.back() + 1e-6);
      open_ends.push_back(s.ts + s.dur);
    }
  }
}

const Slice* find(const std::vector<Slice>& slices, int pid, const std::string& name) {
  for (const Slice& s : slices) {
    if (s.pid == pid && s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("one 1 MiB message: its first link is busy for the wire time of its packets, to the sampling interval") {
  // 256 packets of 4 KiB + 64 B header at 100 Gb/s: 256 x 4160 x 8 / 100e9 = 85.1968 us.
  ChromeTraceOptions options;
  options.interval = 1'000'000;  // 1 us
  options.fixed_interval = true;
  const Recorded r = record(star_yaml(2, "1us") + "network: {mtu: 4KiB, header_bytes: 64, ack_interval: 1000}\n"
                                                  "messages:\n  - {src: g0, dst: g1, bytes: 1MiB}\n",
                            options);
  const Slice* busy = nullptr;
  for (const Slice& s : r.slices) {
    if (s.pid == 1 && r.thread_names.at({s.pid, s.tid}) == "g0:0 -> s") busy = &s;
  }
  REQUIRE(busy != nullptr);
  CHECK(busy->name == "busy");
  CHECK(busy->ts <= 1.0);
  CHECK(busy->dur >= 85.1968 - 1.0);
  CHECK(busy->dur <= 85.1968 + 1.0);
  // The switch forwards it one link latency and one packet later: 1 us + 4160 B at 100G.
  const Slice* forward = nullptr;
  for (const Slice& s : r.slices) {
    if (s.pid == 1 && r.thread_names.at({s.pid, s.tid}) == "s:1 -> g1") forward = &s;
  }
  REQUIRE(forward != nullptr);
  CHECK(forward->ts >= 1.0);
  CHECK(forward->ts <= 1.3328 + 1.0);
}

TEST_CASE("a training step's compute and collectives are slices at the hand-worked times, on tracks that never cross") {
  // Four ranks compute 200 us (rank 2: 300 us), all-reduce 1 MiB once all have arrived,
  // then compute 100 us. A rank's AllReduce operation spans from its arrival (200 us;
  // rank 2: 300 us), waiting included; the collective itself runs from 301 us, one notice (1 us) after the
  // last member arrives.
  const auto path = test_temp_path("fabricsim_chrome_trace_step.jsonl");
  {
    std::ofstream f(path);
    f << R"({"fabricsim_trace": 1, "ranks": 4, "achieved_tflops": 100})" << "\n";
    for (int r = 0; r < 4; ++r) {
      f << R"({"rank": )" << r << R"(, "id": 0, "kind": "compute", "duration_us": )" << (r == 2 ? 300 : 200)
        << R"(, "deps": [], "label": "bwd"})" << "\n";
      f << R"({"rank": )" << r
        << R"(, "id": 1, "kind": "collective", "op": "all_reduce", "bytes": 1048576, "key": "dp0", "group": [0,1,2,3], "deps": [0], "label": "dp"})"
        << "\n";
      f << R"({"rank": )" << r << R"(, "id": 2, "kind": "compute", "duration_us": 100, "deps": [1], "label": "opt"})" << "\n";
    }
  }
  const std::string yaml = star_yaml(4, "1us") + "network: {mtu: 4KiB}\nworkload: {kind: trace, file: " + path.string() + "}\n";
  ChromeTraceOptions steps;
  steps.trace_steps = true;
  const Recorded r = record(yaml, steps);
  for (int rank = 0; rank < 4; ++rank) {
    const int pid = 10 + rank;
    const Slice* bwd = find(r.slices, pid, "bwd");
    REQUIRE(bwd != nullptr);
    CHECK(bwd->ts == 0.0);
    CHECK(bwd->dur == (rank == 2 ? 300.0 : 200.0));
    CHECK(r.thread_names.at({pid, bwd->tid}) == "compute");
    const Slice* ar = find(r.slices, pid, "all_reduce 1048576 B (dp)");
    REQUIRE(ar != nullptr);
    CHECK(ar->ts == (rank == 2 ? 300.0 : 200.0));
    const Slice* run = find(r.slices, pid, "all_reduce ring");
    REQUIRE(run != nullptr);
    CHECK(run->ts == 301.0);  // one notice (the star's 1 us links) after the last arrival
    CHECK(run->ts + run->dur == doctest::Approx(ar->ts + ar->dur));
    const Slice* opt = find(r.slices, pid, "opt");
    REQUIRE(opt != nullptr);
    CHECK(opt->ts == doctest::Approx(ar->ts + ar->dur));
    CHECK(opt->dur == 100.0);
  }
  // With trace steps: each rank sends 2 x 3 ring steps of 1 MiB / 4 (one channel).
  int sends = 0;
  for (const Slice& s : r.slices) sends += s.pid == 11 && s.name.rfind("send to rank", 0) == 0;
  CHECK(sends == 6);
  check_nesting(r.slices);
  // Without steps (the default for traces) only the operations are there.
  const Recorded ops = record(yaml);
  for (const Slice& s : ops.slices) CHECK(s.name.rfind("send to rank", 0) != 0);
  std::filesystem::remove(path);
}

TEST_CASE("observing a run with a timeline changes nothing in it, the bounds hold") {
  const std::string yaml =
      two_dgx_h100_yaml("{kind: collective, op: all_reduce, algorithm: ring, channels: 8, sizes: {from: 1MiB, to: 4MiB}, check_data: false}");
  ScenarioRun plain(load_config_text(yaml, "<test>"));
  plain.run();
  const Recorded r = record(yaml);
  CHECK(r.results == without_wall_times(results_json(plain)));
  CHECK(r.text.rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 0) == 0);
  CHECK(r.dropped == 0);
  // 16 ranks, 3 sizes: every rank has one collective slice per size.
  int collectives = 0;
  for (const Slice& s : r.slices) collectives += s.name == "all_reduce ring";
  CHECK(collectives == 16 * 3);
  check_nesting(r.slices);
  // Split over two threads, the ranks report from two threads at once: the same slices
  // (in another order) and the same results.
  ChromeTraceOptions steps;
  steps.trace_steps = true;
  const Recorded serial_steps = record(yaml, steps);
  const Recorded split = record(yaml, steps, 2);
  CHECK(without_split_lines(split.results) == serial_steps.results);
  const auto sorted = [](std::vector<Slice> v) {
    std::sort(v.begin(), v.end(), [](const Slice& a, const Slice& b) {
      return std::tie(a.pid, a.tid, a.ts, a.dur, a.name) < std::tie(b.pid, b.tid, b.ts, b.dur, b.name);
    });
    return v;
  };
  const std::vector<Slice> one = sorted(serial_steps.slices), two = sorted(split.slices);
  REQUIRE(one.size() == two.size());
  bool same = true;
  for (std::size_t i = 0; i < one.size(); ++i) {
    same = same && one[i].pid == two[i].pid && one[i].tid == two[i].tid && one[i].ts == two[i].ts && one[i].dur == two[i].dur &&
           one[i].name == two[i].name;
  }
  CHECK(same);
  check_nesting(split.slices);

  ChromeTraceOptions bounded;
  bounded.max_events = 20;
  bounded.from = 50'000'000;  // 50 us
  bounded.to = 100'000'000;   // 100 us
  const Recorded b = record(yaml, bounded);
  CHECK(b.written == 20);
  CHECK(b.dropped > 0);
  CHECK(b.results == r.results);
  for (const Slice& s : b.slices) {
    CHECK(s.ts >= 50.0);
    CHECK(s.ts + s.dur <= 100.0 + 1e-6);
  }

  // A bound that the link tracks would overrun: with a fixed interval they stop early;
  // with the default one it coarsens as the bound fills and they reach the run's end.
  const auto last_link_end = [](const Recorded& rec) {
    double last = 0;
    for (const Slice& s : rec.slices) {
      if (s.pid == 1) last = std::max(last, s.ts + s.dur);
    }
    return last;
  };
  const double sim_us = static_cast<double>(plain.sim_time()) * 1e-6;
  ChromeTraceOptions tight;
  tight.max_events = 4000;
  tight.interval = 1'000'000;  // 1 us
  tight.fixed_interval = true;
  const Recorded fixed = record(yaml, tight);
  CHECK(last_link_end(fixed) < 0.8 * sim_us);
  tight.fixed_interval = false;
  const Recorded coarsening = record(yaml, tight);
  CHECK(last_link_end(coarsening) > 0.9 * sim_us);
}
