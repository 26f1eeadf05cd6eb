#include "app/output/collective_report.h"

#include <algorithm>
#include <cstdio>

#include "app/output/result_keys.h"
#include "sim/core/units.h"

namespace fabricsim {

void write_model_fields(JsonWriter& j, const CollectiveSweep& c) {
  j.key("protocol").value(c.config().protocol);
  j.key("model").value(c.model_description());
  if (c.nccl_model()) {
    j.key("nccl_version").value(c.nccl_version());
  } else {
    j.key("nccl_version").null();
  }
  j.key("validation_gaps").begin_array();
  for (const std::string& gap : c.validation_gaps()) j.value(gap);
  j.end_array();
}

void write_row_fields(JsonWriter& j, const CollectiveRow& row) {
  j.key(result_key::kSizeBytes).value(static_cast<std::int64_t>(row.size_bytes));
  if (row.time >= 0) {
    j.key(result_key::kTimeUs).value(to_us(row.time));
  } else {
    j.key(result_key::kTimeUs).null();
  }
  j.key(result_key::kAlgbwGBps).value(row.algbw_GBps);
  j.key(result_key::kBusbwGBps).value(row.busbw_GBps);
  j.key("data_check").value(row.data_check);
  j.key("algorithm").value(row.algorithm);
  j.key("nccl_algo").value(nccl_algo_name(row.algorithm));
  j.key("nccl_proto").value(row.protocol);
  if (row.nccl_model_us >= 0) {
    j.key("nccl_model_us").value(row.nccl_model_us);
  } else {
    j.key("nccl_model_us").null();
  }
  // The corpus's errors for rows like this, and the measured busbw they imply.
  const ErrorBand& band = row.error_band;
  if (band.found) {
    j.key("error_band").begin_object();
    j.key("low").value(band.low);
    j.key("high").value(band.high);
    j.key("regime").value(band.regime);
    j.key(result_key::kRows).value(static_cast<std::int64_t>(band.rows));
    j.key("tables").value(static_cast<std::int64_t>(band.tables));
    j.key("busbw_low_GBps").value(row.busbw_GBps / (1 + band.high));
    j.key("busbw_high_GBps").value(row.busbw_GBps / (1 + band.low));
    j.end_object();
  } else {
    j.key("error_band").null();
  }
}

void print_collective_table(std::ostream& out, const CollectiveSweep& c) {
  char line[256];
  out << "  model: " << c.model_description() << "\n";
  for (const std::string& gap : c.validation_gaps()) {
    out << "  outside the validated corpus (configs/validation/corpus.tsv): " << gap << "\n";
  }
  const auto& rows = c.rows();
  if (std::any_of(rows.begin(), rows.end(), [](const CollectiveRow& r) { return r.error_band.found; })) {
    out << "  error band: simulated / measured busbw - 1 as the corpus saw it for rows like this one (docs/accuracy.md)\n";
  }
  std::snprintf(line, sizeof line, "  %14s %14s %6s %12s %10s %10s  %-9s %-6s %12s %15s  %s\n", "size(B)", "count", "type",
                "time(us)", "algbw", "busbw", "algo", "proto", "nccl(us)", "error band", "data");
  out << line;
  for (const CollectiveRow& row : c.rows()) {
    char nccl[32] = "-";
    if (row.nccl_model_us >= 0) std::snprintf(nccl, sizeof nccl, "%.2f", row.nccl_model_us);
    char band[48] = "-";
    if (row.error_band.found) {
      std::snprintf(band, sizeof band, "%+.0f%%..%+.0f%%", row.error_band.low * 100, row.error_band.high * 100);
    }
    std::snprintf(line, sizeof line, "  %14lld %14lld %6s %12.2f %10.2f %10.2f  %-9s %-6s %12s %15s  %s\n",
                  static_cast<long long>(row.size_bytes), static_cast<long long>(row.size_bytes / 4), "float",
                  row.time >= 0 ? to_us(row.time) : -1.0, row.algbw_GBps, row.busbw_GBps, nccl_algo_name(row.algorithm),
                  row.protocol.c_str(), nccl, band, row.data_check.c_str());
    out << line;
  }
}

}  // namespace fabricsim
