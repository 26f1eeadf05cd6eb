#pragma once
// Readers for the measurement logs users already have: nccl-tests output (the `#`
// header and comment lines, out-of-place and in-place columns, `# Avg bus bandwidth`),
// the plain four-column tables of shared/data (size, time, algbw, busbw), and perftest's
// ib_*_bw and ib_*_lat tables. Errors name the file and line.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim {

struct CollectiveSample {
  std::int64_t bytes = 0;
  double time_us = 0;      // out-of-place
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::optional<double> in_place_time_us;
  std::optional<double> in_place_busbw_GBps;
};

struct NcclTestsLog {
  std::string name;
  int ranks = 0;           // from the "Rank N" lines, 0 if the log does not say
  std::vector<CollectiveSample> samples;
  std::optional<double> avg_busbw_GBps;
  bool mentions_nvls = false;  // a comment or NCCL INFO line names NVLS (NCCL_ALGO=NVLS runs)
};

// nccl-tests output; falls back to the plain four-column table when there is no header.
NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& name);
NcclTestsLog load_nccl_tests(const std::string& path);

struct PerftestSample {
  std::int64_t bytes = 0;
  double bandwidth_Gbps = 0;  // bandwidth tables (average column), in Gb/s whatever the log's unit
  double latency_us = 0;      // latency tables (t_typical, else t_avg)
};

struct PerftestLog {
  std::string name;
  enum class Kind { kBandwidth, kLatency } kind = Kind::kBandwidth;
  std::vector<PerftestSample> samples;
};

PerftestLog parse_perftest(const std::string& text, const std::string& name);
PerftestLog load_perftest(const std::string& path);

}  // namespace fabricsim
