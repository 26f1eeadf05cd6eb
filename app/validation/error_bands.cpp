#include "app/validation/error_bands.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

namespace fabricsim {

const char* validation_corpus_errors_text();  // app/validation/corpus_data.cpp.in

SizeBand size_band(std::int64_t bytes) {
  if (bytes < (std::int64_t{1} << 20)) return SizeBand::kSmall;
  if (bytes < (std::int64_t{64} << 20)) return SizeBand::kMid;
  return SizeBand::kLarge;
}

const char* size_band_name(SizeBand band) {
  switch (band) {
    case SizeBand::kSmall: return "< 1 MiB";
    case SizeBand::kMid: return "1-64 MiB";
    case SizeBand::kLarge: return ">= 64 MiB";
  }
  return "?";
}

std::vector<CorpusError> parse_corpus_errors(const char* text) {
  std::vector<CorpusError> out;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#' || line.rfind("table\t", 0) == 0) continue;
    std::vector<std::string> f;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) f.push_back(cell);
    // table, use, nodes, algorithm/protocol, bytes, measured busbw, simulated busbw, error,
    // then the collective (all_reduce where absent)
    if (f.size() != 8 && f.size() != 9) {
      throw std::runtime_error("corpus_errors.tsv line " + std::to_string(number) + ": expected 8 or 9 columns");
    }
    if (f[1] != "prediction") continue;
    CorpusError e;
    e.table = f[0];
    e.nodes = std::stoi(f[2]);
    const auto slash = f[3].find('/');
    e.algorithm = f[3].substr(0, slash);
    e.protocol = slash == std::string::npos ? "" : f[3].substr(slash + 1);
    e.bytes = std::stoll(f[4]);
    if (std::stod(f[5]) <= 0) continue;  // nothing measured: no error to learn from
    e.error = std::stod(f[7]);
    if (f.size() == 9) e.op = f[8];
    out.push_back(std::move(e));
  }
  return out;
}

const std::vector<CorpusError>& built_in_corpus_errors() {
  static const std::vector<CorpusError> corpus = parse_corpus_errors(validation_corpus_errors_text());
  return corpus;
}

std::string band_family(const std::string& op) {
  // NCCL's cost model prices these alike (n - 1 steps of a ring), and the ring runs them
  // as mirror images; broadcast and reduce likewise.
  if (op == "all_gather" || op == "reduce_scatter") return "all_gather/reduce_scatter";
  if (op == "broadcast" || op == "reduce") return "broadcast/reduce";
  return op;
}

namespace {

ErrorBand band_of(const std::vector<const CorpusError*>& rows, std::string regime) {
  ErrorBand b;
  if (rows.empty()) return b;
  b.found = true;
  b.regime = std::move(regime);
  b.low = rows.front()->error;
  b.high = rows.front()->error;
  std::set<std::string> tables;
  for (const CorpusError* r : rows) {
    b.low = std::min(b.low, r->error);
    b.high = std::max(b.high, r->error);
    tables.insert(r->table);
  }
  b.rows = static_cast<int>(rows.size());
  b.tables = static_cast<int>(tables.size());
  return b;
}

}  // namespace

ErrorBand error_band(const std::vector<CorpusError>& corpus, const std::string& algorithm, const std::string& protocol,
                     std::int64_t bytes, int nodes, const std::string& left_out, const std::string& op) {
  const SizeBand band = size_band(bytes);
  const bool across = nodes > 1;
  const std::string family = band_family(op);
  std::vector<const CorpusError*> same_pair, same_algorithm, same_size;
  for (const CorpusError& e : corpus) {
    if (e.table == left_out || band_family(e.op) != family || size_band(e.bytes) != band || (e.nodes > 1) != across) continue;
    same_size.push_back(&e);
    if (e.algorithm != algorithm) continue;
    same_algorithm.push_back(&e);
    if (e.protocol == protocol) same_pair.push_back(&e);
  }
  const std::string where = std::string(size_band_name(band)) + (across ? ", across nodes" : ", one node");
  const std::string what = family == "all_reduce" ? "" : family + " ";
  if (!same_pair.empty()) return band_of(same_pair, what + algorithm + "/" + protocol + ", " + where);
  if (!same_algorithm.empty()) return band_of(same_algorithm, what + algorithm + " (any protocol), " + where);
  return band_of(same_size, what + "any algorithm, " + where);
}

std::vector<LeaveOneOut> leave_one_out(const std::vector<CorpusError>& corpus) {
  std::vector<LeaveOneOut> out;
  for (const CorpusError& e : corpus) {
    auto it = std::find_if(out.begin(), out.end(), [&](const LeaveOneOut& l) { return l.table == e.table; });
    if (it == out.end()) it = out.insert(out.end(), LeaveOneOut{e.table});
    if (e.bytes < (std::int64_t{1} << 20)) continue;
    ++it->rows;
    const ErrorBand b = error_band(corpus, e.algorithm, e.protocol, e.bytes, e.nodes, e.table, e.op);
    if (!b.found) continue;
    ++it->banded;
    if (e.error >= b.low && e.error <= b.high) ++it->covered;
  }
  return out;
}

LeaveOneOut leave_one_out_total(const std::vector<LeaveOneOut>& checks) {
  LeaveOneOut all;
  all.table = "all tables";
  for (const LeaveOneOut& l : checks) {
    all.rows += l.rows;
    all.banded += l.banded;
    all.covered += l.covered;
  }
  return all;
}

}  // namespace fabricsim
