#include "app/validation/error_bands.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <boost/math/distributions/students_t.hpp>

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

double log_error(const CorpusError& e) { return std::log1p(e.error); }

// A regime exactly (collective family, size band, side, algorithm, protocol).
using RegimeKey = std::tuple<std::string, SizeBand, bool, std::string, std::string>;
RegimeKey regime_key(const CorpusError& e) {
  return {band_family(e.op), size_band(e.bytes), e.nodes > 1, e.algorithm, e.protocol};
}

// Rows grouped by table, in log error.
using ByTable = std::map<std::string, std::vector<double>>;

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// Sum of squares about each table's mean, and its degrees of freedom.
std::pair<double, int> within_sum(const ByTable& tables) {
  double sum = 0;
  int df = 0;
  for (const auto& [table, xs] : tables) {
    const double m = mean(xs);
    for (double x : xs) sum += (x - m) * (x - m);
    df += static_cast<int>(xs.size()) - 1;
  }
  return {sum, df};
}

std::vector<double> table_means(const ByTable& tables) {
  std::vector<double> means;
  for (const auto& [table, xs] : tables) means.push_back(mean(xs));
  return means;
}

// Sum of squares of the tables' means about their mean, and its degrees of freedom.
std::pair<double, int> between_sum(const std::vector<double>& means) {
  const double c = mean(means);
  double sum = 0;
  for (double m : means) sum += (m - c) * (m - c);
  return {sum, static_cast<int>(means.size()) - 1};
}

// A variance and the degrees of freedom it was estimated with (0: nothing to estimate it from).
struct Variance {
  double value = 0;
  int df = 0;
};

Variance variance_of(std::pair<double, int> sum) { return sum.second > 0 ? Variance{sum.first / sum.second, sum.second} : Variance{}; }

struct Pooled {
  Variance within;   // of a row about its table's mean, pooled over the regimes of one size band
  Variance between;  // of a table's mean about its regime's, pooled over the size band's regimes of two tables or more
};

// Both spreads pooled over the regimes of `band`: machines differ more where latency and
// NCCL's protocol switches set the time (small and mid sizes) than where bandwidth does.
// A size band without a regime of two tables borrows every band's between-table spread.
Pooled pooled_variances(const std::vector<CorpusError>& corpus, const std::string& left_out, SizeBand band) {
  std::map<RegimeKey, ByTable> regimes;
  for (const CorpusError& e : corpus) {
    if (e.table != left_out) regimes[regime_key(e)][e.table].push_back(log_error(e));
  }
  std::pair<double, int> within{0, 0}, between{0, 0}, between_all{0, 0};
  const auto add = [](std::pair<double, int>& to, std::pair<double, int> from) {
    to.first += from.first;
    to.second += from.second;
  };
  for (const auto& [key, tables] : regimes) {
    const bool in_band = std::get<1>(key) == band;
    if (in_band) add(within, within_sum(tables));
    if (tables.size() >= 2) {
      const auto sum = between_sum(table_means(tables));
      add(between_all, sum);
      if (in_band) add(between, sum);
    }
  }
  return {variance_of(within), variance_of(between.second > 0 ? between : between_all)};
}

ErrorBand band_of(const std::vector<const CorpusError*>& rows, std::string regime, const Pooled& pooled) {
  ErrorBand b;
  if (rows.empty()) return b;
  b.found = true;
  b.regime = std::move(regime);
  b.seen_low = rows.front()->error;
  b.seen_high = rows.front()->error;
  ByTable tables;
  for (const CorpusError* r : rows) {
    b.seen_low = std::min(b.seen_low, r->error);
    b.seen_high = std::max(b.seen_high, r->error);
    tables[r->table].push_back(log_error(*r));
  }
  b.rows = static_cast<int>(rows.size());
  b.tables = static_cast<int>(tables.size());
  const std::vector<double> means = table_means(tables);
  const double center = mean(means);
  const auto [within_ss, within_df] = within_sum(tables);
  const Variance within = within_df >= 2 ? Variance{within_ss / within_df, within_df} : pooled.within;
  const Variance between = b.tables >= 3 ? variance_of(between_sum(means)) : pooled.between;
  // A new machine's row: its table's offset (known to within the regime mean's own
  // uncertainty, between / tables) plus its row's scatter.
  const double offset = between.value * (1.0 + 1.0 / b.tables);
  const double sd = std::sqrt(offset + within.value);
  // Both parts are estimates: Student's t with the Welch-Satterthwaite degrees of freedom.
  double share = 0;
  if (between.df > 0) share += offset * offset / between.df;
  if (within.df > 0) share += within.value * within.value / within.df;
  const double df = share > 0 ? (offset + within.value) * (offset + within.value) / share : 0;
  b.degrees_of_freedom = df;
  const double t = df > 0 ? boost::math::quantile(boost::math::students_t(df), 0.5 + kErrorBandLevel / 2) : 0;
  b.low = std::expm1(center - t * sd);
  b.high = std::expm1(center + t * sd);
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
  if (same_size.empty()) return {};
  const Pooled pooled = pooled_variances(corpus, left_out, band);
  if (!same_pair.empty()) return band_of(same_pair, what + algorithm + "/" + protocol + ", " + where, pooled);
  if (!same_algorithm.empty()) return band_of(same_algorithm, what + algorithm + " (any protocol), " + where, pooled);
  return band_of(same_size, what + "any algorithm, " + where, pooled);
}

namespace {

// Each row of 1 MiB and up against the band the corpus gives without its table, counted
// under its group (`group_of`), groups in order of their first row.
template <class GroupOf>
std::vector<LeaveOneOut> check_rows(const std::vector<CorpusError>& corpus, GroupOf group_of, bool list_empty_groups) {
  std::vector<LeaveOneOut> out;
  for (const CorpusError& e : corpus) {
    if (!list_empty_groups && e.bytes < (std::int64_t{1} << 20)) continue;
    const std::string group = group_of(e);
    auto it = std::find_if(out.begin(), out.end(), [&](const LeaveOneOut& l) { return l.group == group; });
    if (it == out.end()) it = out.insert(out.end(), LeaveOneOut{group});
    if (e.bytes < (std::int64_t{1} << 20)) continue;
    ++it->rows;
    const ErrorBand b = error_band(corpus, e.algorithm, e.protocol, e.bytes, e.nodes, e.table, e.op);
    if (!b.found) continue;
    ++it->banded;
    it->width_sum += b.high - b.low;
    if (e.error >= b.low && e.error <= b.high) ++it->covered;
  }
  return out;
}

}  // namespace

std::vector<LeaveOneOut> leave_one_out(const std::vector<CorpusError>& corpus) {
  return check_rows(corpus, [](const CorpusError& e) { return e.table; }, true);
}

std::vector<LeaveOneOut> leave_one_out_by_regime(const std::vector<CorpusError>& corpus) {
  return check_rows(
      corpus, [&](const CorpusError& e) { return error_band(corpus, e.algorithm, e.protocol, e.bytes, e.nodes, {}, e.op).regime; }, false);
}

LeaveOneOut leave_one_out_total(const std::vector<LeaveOneOut>& checks) {
  LeaveOneOut all;
  all.group = "all tables";
  for (const LeaveOneOut& l : checks) {
    all.rows += l.rows;
    all.banded += l.banded;
    all.covered += l.covered;
    all.width_sum += l.width_sum;
  }
  return all;
}

}  // namespace fabricsim
