#include "calibrate/log_import.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fabricsim {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

double number(const std::string& w, const std::string& where, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(w.c_str(), &end);
  if (w.empty() || *end != '\0' || !std::isfinite(v)) throw std::runtime_error(where + ": expected a number for " + what + ", got '" + w + "'");
  return v;
}

std::string trim_hash(const std::string& line) {
  const auto at = line.find_first_not_of(" \t");
  if (at == std::string::npos || line[at] != '#') return line;
  return line.substr(at + 1);
}

}  // namespace

NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& name) {
  NcclTestsLog log;
  log.name = name;
  std::istringstream in(text);
  std::string line;
  int number_of = 0;
  // Column positions, found on the "size count type ..." header; the first time/algbw/
  // busbw triple is out-of-place, the second in-place.
  int col_size = -1, col_time = -1, col_algbw = -1, col_busbw = -1, col_time2 = -1, col_busbw2 = -1;
  int max_rank = -1;
  while (std::getline(in, line)) {
    ++number_of;
    const std::string where = name + ":" + std::to_string(number_of);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    if ((line[first] == '#' || line.find("NCCL INFO") != std::string::npos) && line.find("NVLS") != std::string::npos) {
      log.mentions_nvls = true;
    }
    if (line[first] == '#') {
      const auto w = words(trim_hash(line));
      if (w.size() >= 2 && w[0] == "Rank") max_rank = std::max(max_rank, static_cast<int>(number(w[1], where, "a rank")));
      if (w.size() >= 3 && w[0] == "size" && w[1] == "count") {
        col_size = 0;
        int seen_time = 0, seen_busbw = 0;
        for (int i = 0; i < static_cast<int>(w.size()); ++i) {
          if (w[static_cast<std::size_t>(i)] == "time") (seen_time++ == 0 ? col_time : col_time2) = i;
          if (w[static_cast<std::size_t>(i)] == "algbw" && col_algbw < 0) col_algbw = i;
          if (w[static_cast<std::size_t>(i)] == "busbw") (seen_busbw++ == 0 ? col_busbw : col_busbw2) = i;
        }
        if (col_time < 0 || col_algbw < 0 || col_busbw < 0) throw std::runtime_error(where + ": a header without time, algbw and busbw columns");
      }
      if (w.size() >= 4 && w[0] == "Avg" && w[1] == "bus" && w[2] == "bandwidth") {
        log.avg_busbw_GBps = number(w.back(), where, "the average bus bandwidth");
      }
      continue;
    }
    const auto w = words(line);
    if (col_size < 0) {
      // Before any header, lines such as "NCCL INFO ..." are not data; rows that start
      // with a number are the plain table "size time algbw busbw".
      if (!std::isdigit(static_cast<unsigned char>(w[0][0]))) continue;
      if (w.size() != 4) throw std::runtime_error(where + ": expected four columns (size, time, algbw, busbw) or an nccl-tests header before the data");
      CollectiveSample s;
      s.bytes = static_cast<std::int64_t>(number(w[0], where, "size"));
      s.time_us = number(w[1], where, "time");
      s.algbw_GBps = number(w[2], where, "algbw");
      s.busbw_GBps = number(w[3], where, "busbw");
      log.samples.push_back(s);
      continue;
    }
    // Lines such as "NCCL INFO ..." or "[rank]..." interleave with the table: only rows
    // that start with a number are data.
    if (w.empty() || !std::isdigit(static_cast<unsigned char>(w[0][0]))) continue;
    const int needed = std::max({col_time, col_algbw, col_busbw});
    if (static_cast<int>(w.size()) <= needed) {
      throw std::runtime_error(where + ": expected at least " + std::to_string(needed + 1) + " columns, got " + std::to_string(w.size()));
    }
    CollectiveSample s;
    s.bytes = static_cast<std::int64_t>(number(w[static_cast<std::size_t>(col_size)], where, "size"));
    s.time_us = number(w[static_cast<std::size_t>(col_time)], where, "time");
    s.algbw_GBps = number(w[static_cast<std::size_t>(col_algbw)], where, "algbw");
    s.busbw_GBps = number(w[static_cast<std::size_t>(col_busbw)], where, "busbw");
    // The in-place pair only where the header named both (a header missing one of them
    // left it at -1: found by scripts/fuzz, it read before the row).
    if (col_time2 >= 0 && col_busbw2 >= 0 && static_cast<int>(w.size()) > std::max(col_time2, col_busbw2)) {
      s.in_place_time_us = number(w[static_cast<std::size_t>(col_time2)], where, "in-place time");
      s.in_place_busbw_GBps = number(w[static_cast<std::size_t>(col_busbw2)], where, "in-place busbw");
    }
    log.samples.push_back(s);
  }
  log.ranks = max_rank + 1;
  if (log.samples.empty()) throw std::runtime_error(name + ": no measurements found");
  return log;
}

NcclTestsLog load_nccl_tests(const std::string& path) { return parse_nccl_tests(read_file(path), path); }

PerftestLog parse_perftest(const std::string& text, const std::string& name) {
  PerftestLog log;
  log.name = name;
  std::istringstream in(text);
  std::string line;
  int number_of = 0;
  int col_bytes = -1, col_value = -1;
  double to_gbps = 1;
  while (std::getline(in, line)) {
    ++number_of;
    const std::string where = name + ":" + std::to_string(number_of);
    auto w = words(line);
    if (w.empty() || w[0].rfind("---", 0) == 0) continue;
    if (w[0] == "#bytes") {
      // Bandwidth: "#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]";
      // latency: "#bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] ...".
      col_bytes = 0;
      col_value = -1;
      // Rejoin "BW average[...]" and "99% percentile[...]" into single column names.
      std::vector<std::string> cols;
      for (std::size_t i = 0; i < w.size(); ++i) {
        if ((w[i] == "BW" || w[i].back() == '%') && i + 1 < w.size()) {
          cols.push_back(w[i] + " " + w[i + 1]);
          ++i;
        } else {
          cols.push_back(w[i]);
        }
      }
      for (int i = 0; i < static_cast<int>(cols.size()); ++i) {
        const std::string& c = cols[static_cast<std::size_t>(i)];
        if (c.rfind("BW average", 0) == 0) {
          log.kind = PerftestLog::Kind::kBandwidth;
          col_value = i;
          // perftest divides by 2^20 for MB/sec and by 1.25e8 for Gb/sec.
          to_gbps = c.find("MB/sec") != std::string::npos ? 1048576.0 * 8 / 1e9 : c.find("Gb/sec") != std::string::npos ? 1.0 : 0.0;
          if (to_gbps == 0) throw std::runtime_error(where + ": unknown bandwidth unit in '" + c + "'");
        }
        if (c.rfind("t_typical", 0) == 0 || (c.rfind("t_avg", 0) == 0 && col_value < 0)) {
          log.kind = PerftestLog::Kind::kLatency;
          col_value = i;
        }
      }
      if (col_value < 0) throw std::runtime_error(where + ": a header without a BW average or t_typical/t_avg column");
      continue;
    }
    if (col_bytes < 0 || !std::isdigit(static_cast<unsigned char>(w[0][0]))) continue;
    if (static_cast<int>(w.size()) <= col_value) {
      throw std::runtime_error(where + ": expected at least " + std::to_string(col_value + 1) + " columns, got " + std::to_string(w.size()));
    }
    PerftestSample s;
    s.bytes = static_cast<std::int64_t>(number(w[static_cast<std::size_t>(col_bytes)], where, "#bytes"));
    const double v = number(w[static_cast<std::size_t>(col_value)], where, log.kind == PerftestLog::Kind::kBandwidth ? "bandwidth" : "latency");
    if (log.kind == PerftestLog::Kind::kBandwidth) {
      s.bandwidth_Gbps = v * to_gbps;
    } else {
      s.latency_us = v;
    }
    log.samples.push_back(s);
  }
  if (log.samples.empty()) throw std::runtime_error(name + ": no perftest table found (a line starting with #bytes, then rows)");
  return log;
}

PerftestLog load_perftest(const std::string& path) { return parse_perftest(read_file(path), path); }

}  // namespace fabricsim
