#pragma once
// Expected error of a predicted collective, from the accuracy corpus: every row of every
// predicted table (configs/validation/corpus_errors.tsv, written by scripts/accuracy
// --write) is one measured error, simulated busbw / measured busbw - 1. A row's regime is
// the same algorithm and protocol, the same size band and one node or several; where the
// corpus has no row of that regime it widens to the algorithm, then to the size band alone,
// and says so.
// A band is a 90% prediction interval for a row of a machine the corpus has not seen, on
// ln(1 + error): the rows of one table share a machine, so the spread has two parts, how far
// tables' means lie apart (between) and how far a table's rows lie from its mean (within).
// A regime with three tables or more gives its own between-table spread, one with two rows
// or more beyond its tables' means its own within; otherwise the figure pooled over the
// regimes of the same size band stands in (between: those with two tables or more, else
// every band's), so a regime seen once still gets a band as wide as machines are seen to
// differ. Both spreads are estimates from few tables: the interval takes Student's t with
// their Welch-Satterthwaite degrees of freedom, not the normal's z. docs/accuracy.md says
// how often each table's rows fell inside the band the other tables gave (leave one out).
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim {

struct CorpusError {
  std::string table;
  std::string op = "all_reduce";  // the collective (op_name)
  int nodes = 1;
  std::string algorithm;  // NCCL's name: Ring, Tree, NVLS, NVLSTree, CollNetDirect
  std::string protocol;   // LL, LL128, Simple
  std::int64_t bytes = 0;
  double error = 0;  // simulated busbw / measured busbw - 1
};

enum class SizeBand { kSmall, kMid, kLarge };  // < 1 MiB, [1 MiB, 64 MiB), >= 64 MiB
SizeBand size_band(std::int64_t bytes);
const char* size_band_name(SizeBand band);

struct ErrorBand {
  bool found = false;  // false: the corpus has no predicted row of this size band
  double low = 0;      // the 90% prediction interval's lower end (simulated below measured)
  double high = 0;     // and its upper end
  double seen_low = 0;   // the most negative error the regime's rows saw
  double seen_high = 0;  // the most positive
  int rows = 0;
  int tables = 0;
  double degrees_of_freedom = 0;  // of the interval's spread (Welch-Satterthwaite); 0: no spread
  std::string regime;  // what matched, e.g. "Ring/Simple, >= 64 MiB, across nodes"
};

// The predicted rows of corpus_errors.tsv's text; throws std::runtime_error on a
// malformed line (the file is ours: a bad line is a bug, not input).
std::vector<CorpusError> parse_corpus_errors(const char* text);
// The corpus as built into this binary.
const std::vector<CorpusError>& built_in_corpus_errors();

// Collectives whose rows share bands: AllGather with ReduceScatter, Broadcast with Reduce;
// each other collective alone.
std::string band_family(const std::string& op);

// The band for one predicted row of the collective `op`; rows of `left_out` (a table's
// name) are ignored. Only rows of the same family (band_family) count.
ErrorBand error_band(const std::vector<CorpusError>& corpus, const std::string& algorithm, const std::string& protocol,
                     std::int64_t bytes, int nodes, const std::string& left_out = {}, const std::string& op = "all_reduce");

// The bands' coverage: two-sided 90% prediction intervals.
inline constexpr double kErrorBandLevel = 0.90;

// Leave one out: each table's rows checked against the bands of the other tables.
struct LeaveOneOut {
  std::string group;  // what its rows share: a table, or a regime (ErrorBand::regime)
  int rows = 0;     // rows at 1 MiB and up
  int banded = 0;   // of those, rows the other tables gave a band for
  int covered = 0;  // of those, rows whose error lay inside that band
  double width_sum = 0;  // the banded rows' band widths (high - low), summed: a band is only as useful as it is narrow
};
std::vector<LeaveOneOut> leave_one_out(const std::vector<CorpusError>& corpus);
// The same checks grouped by band: each row under its own regime (the band the whole corpus
// gives it), checked against that regime's band made without the row's table. How often each
// band held rows of a machine it had not seen; regimes without a row of 1 MiB and up are left out.
std::vector<LeaveOneOut> leave_one_out_by_regime(const std::vector<CorpusError>& corpus);
// Every table's rows together (group "all tables").
LeaveOneOut leave_one_out_total(const std::vector<LeaveOneOut>& checks);

}  // namespace fabricsim
