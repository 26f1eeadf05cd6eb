// `fabricsim error-bands`. One command, one file: its options, usage and what it runs.
#include "app/commands/command_support.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "app/output/json_writer.h"
#include "app/validation/error_bands.h"

namespace fabricsim {

namespace {

void add_options(po::options_description& options) {
  options.add_options()("json", "print one JSON object")("markdown", "print Markdown tables (docs/accuracy.md)");
}

// One regime per collective, algorithm, protocol, size band and node side the corpus has rows of.
std::vector<ErrorBand> regimes(const std::vector<CorpusError>& corpus) {
  std::vector<std::tuple<std::string, std::string, std::string, SizeBand, bool>> seen;
  std::vector<ErrorBand> out;
  for (const CorpusError& e : corpus) {
    const auto key = std::make_tuple(band_family(e.op), e.algorithm, e.protocol, size_band(e.bytes), e.nodes > 1);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    out.push_back(error_band(corpus, e.algorithm, e.protocol, e.bytes, e.nodes, {}, e.op));
  }
  return out;
}

// The mean width of the bands a table's rows were checked against (0 where none was).
double mean_width(const LeaveOneOut& l) { return l.banded > 0 ? l.width_sum / l.banded : 0.0; }

// One leave-one-out count as a JSON object, its group under `name` (none: left out).
void write_check(JsonWriter& j, const char* name, const LeaveOneOut& l) {
  j.begin_object();
  if (name != nullptr) j.key(name).value(l.group);
  j.key("rows").value(static_cast<std::int64_t>(l.rows));
  j.key("banded").value(static_cast<std::int64_t>(l.banded));
  j.key("covered").value(static_cast<std::int64_t>(l.covered));
  j.key("mean_width").value(mean_width(l));
  j.end_object();
}

// The same as a row of docs/accuracy.md's leave-one-out tables.
void print_check_row(const LeaveOneOut& l) {
  char line[256];
  std::snprintf(line, sizeof line, "| %s | %d | %d | %d (%.0f%%) | %.1f points |\n", l.group.c_str(), l.rows, l.banded, l.covered,
                l.banded > 0 ? 100.0 * l.covered / l.banded : 0.0, 100 * mean_width(l));
  std::cout << line;
}

int error_bands_command(const po::variables_map& vm) {
  std::vector<CorpusError> corpus;
  try {
    if (vm.count("config")) {
      const std::string path = vm["config"].as<std::string>();
      std::ifstream in(path);
      if (!in) throw std::runtime_error(path + ": cannot be read");
      std::ostringstream text;
      text << in.rdbuf();
      corpus = parse_corpus_errors(text.str().c_str());
    } else {
      corpus = built_in_corpus_errors();
    }
  } catch (const std::exception& e) {
    std::cerr << "fabricsim error-bands: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  const std::vector<ErrorBand> bands = regimes(corpus);
  const std::vector<LeaveOneOut> checks = leave_one_out(corpus);
  const LeaveOneOut all = leave_one_out_total(checks);
  const std::vector<LeaveOneOut> by_regime = leave_one_out_by_regime(corpus);
  char line[256];
  if (vm.count("json")) {
    JsonWriter j;
    j.begin_object();
    j.key("bands").begin_array();
    for (const ErrorBand& b : bands) {
      j.begin_object();
      j.key("regime").value(b.regime);
      j.key("low").value(b.low);
      j.key("high").value(b.high);
      j.key("seen_low").value(b.seen_low);
      j.key("seen_high").value(b.seen_high);
      j.key("rows").value(static_cast<std::int64_t>(b.rows));
      j.key("tables").value(static_cast<std::int64_t>(b.tables));
      j.key("degrees_of_freedom").value(b.degrees_of_freedom);
      j.end_object();
    }
    j.end_array();
    j.key("leave_one_out").begin_array();
    for (const LeaveOneOut& l : checks) write_check(j, "table", l);
    j.end_array();
    j.key("leave_one_out_total");
    write_check(j, nullptr, all);
    j.key("leave_one_out_by_regime").begin_array();
    for (const LeaveOneOut& l : by_regime) write_check(j, "regime", l);
    j.end_array();
    j.end_object();
    std::cout << j.str() << "\n";
  } else if (vm.count("markdown")) {
    std::cout << "| regime | error band (90%) | errors seen | rows | tables |\n| --- | ---: | ---: | ---: | ---: |\n";
    for (const ErrorBand& b : bands) {
      std::snprintf(line, sizeof line, "| %s | %+.1f%% to %+.1f%% | %+.1f%% to %+.1f%% | %d | %d |\n", b.regime.c_str(), b.low * 100,
                    b.high * 100, b.seen_low * 100, b.seen_high * 100, b.rows, b.tables);
      std::cout << line;
    }
    std::cout << "\nLeave one out: each predicted table's rows of 1 MiB and up against the bands the other tables give.\n\n"
              << "| table | rows | with a band | inside it | mean band width |\n| --- | ---: | ---: | ---: | ---: |\n";
    for (const LeaveOneOut& l : checks) print_check_row(l);
    print_check_row(all);
    std::cout << "\nLeave one out by band: each regime's rows of 1 MiB and up, each against the regime's band made without its own "
                 "table.\n\n"
              << "| regime | rows | with a band | inside it | mean band width |\n| --- | ---: | ---: | ---: | ---: |\n";
    for (const LeaveOneOut& l : by_regime) print_check_row(l);
  } else {
    std::cout << "# fabricsim error-bands: " << corpus.size() << " predicted rows\n";
    for (const ErrorBand& b : bands) {
      std::snprintf(line, sizeof line, "  %-60s %+7.1f%% .. %+7.1f%% (seen %+.1f%% .. %+.1f%%)  %3d rows from %d table(s)\n",
                    b.regime.c_str(), b.low * 100, b.high * 100, b.seen_low * 100, b.seen_high * 100, b.rows, b.tables);
      std::cout << line;
    }
    std::cout << "  leave one out (rows of 1 MiB and up; inside the other tables' band):\n";
    for (const LeaveOneOut& l : checks) {
      std::snprintf(line, sizeof line, "  %-24s %3d rows, %3d with a band, %3d inside, bands %.1f points wide on average\n",
                    l.group.c_str(), l.rows, l.banded, l.covered, 100 * mean_width(l));
      std::cout << line;
    }
    std::snprintf(line, sizeof line, "  %-24s %3d rows, %3d with a band, %3d inside, bands %.1f points wide on average\n",
                  "all tables", all.rows, all.banded, all.covered, 100 * mean_width(all));
    std::cout << line;
    std::cout << "  leave one out by band (each regime's rows of 1 MiB and up, inside its band made without their table):\n";
    for (const LeaveOneOut& l : by_regime) {
      std::snprintf(line, sizeof line, "  %-60s %3d rows, %3d with a band, %3d inside\n", l.group.c_str(), l.rows, l.banded, l.covered);
      std::cout << line;
    }
  }
  return 0;
}

}  // namespace

const Command kErrorBandsCommand{
    "error-bands",
    "fabricsim error-bands [CORPUS_ERRORS_TSV] [--json | --markdown]\n",
    "the accuracy corpus's error bands (90% prediction intervals) per regime, and how often each table's rows, and each band's, fall inside the band the other tables give (leave one out)",
    add_options,
    [](const po::variables_map& vm, int, char**) { return error_bands_command(vm); },
};

}  // namespace fabricsim
