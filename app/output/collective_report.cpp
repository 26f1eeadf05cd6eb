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
  // The corpus's 90% band for rows like this, the errors it saw, and the measured busbw the band implies.
  const ErrorBand& band = row.error_band;
  if (band.found) {
    j.key("error_band").begin_object();
    j.key("low").value(band.low);
    j.key("high").value(band.high);
    j.key("seen_low").value(band.seen_low);
    j.key("seen_high").value(band.seen_high);
    j.key("regime").value(band.regime);
    j.key(result_key::kRows).value(static_cast<std::int64_t>(band.rows));
    j.key("tables").value(static_cast<std::int64_t>(band.tables));
    j.key("degrees_of_freedom").value(band.degrees_of_freedom);
    j.key("busbw_low_GBps").value(row.busbw_GBps / (1 + band.high));
    j.key("busbw_high_GBps").value(row.busbw_GBps / (1 + band.low));
    j.end_object();
  } else {
    j.key("error_band").null();
  }
}

namespace {

// nccl-tests' time cell: fewer decimals as the time grows, seven characters.
std::string nccl_tests_time(double us) {
  char cell[32];
  std::snprintf(cell, sizeof cell, us >= 10000.0 ? "%7.0f" : us >= 100.0 ? "%7.1f" : "%7.2f", us);
  return cell;
}

}  // namespace

NcclTestsColumns nccl_tests_columns(CollectiveOp op, std::int64_t size, std::int64_t ranks, int root) {
  constexpr std::int64_t kFloat = 4;
  NcclTestsColumns c;
  c.count = size / kFloat;
  c.size = c.count * kFloat;
  if (op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllToAll) {
    // The buffer split over the ranks, rounded down to 16 bytes a rank.
    c.count = (c.count / std::max<std::int64_t>(ranks, 1)) & ~std::int64_t{16 / kFloat - 1};
    c.size = c.count * ranks * kFloat;
  }
  // sendrecv_perf runs its default op, sum, too.
  const bool reduces = op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kReduce ||
                       op == CollectiveOp::kSendRecv;
  c.redop = reduces ? "sum" : "none";
  c.root = op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce ? root : -1;
  return c;
}

void print_collective_table(std::ostream& out, const CollectiveSweep& c) {
  const CollectiveOp op = c.config().op;
  out << "# model: " << c.model_description() << "\n";
  for (const std::string& gap : c.validation_gaps()) {
    out << "# outside the validated corpus (configs/validation/corpus.tsv): " << gap << "\n";
  }
  // The table as nccl-tests prints it (src/common.cu, the layout of its releases up to 2.19,
  // which every published log shows): three header lines, a row per size, out-of-place
  // then in-place. The simulated wire does not depend on where the result lands, so both
  // halves carry the one simulated time.
  out << "#\n";
  out << "#                                                              out-of-place                       in-place          \n";
  out << "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  out << "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n";
  char line[256];
  int wrong_rows = 0;
  double busbw_sum = 0;
  int timed = 0;
  for (const CollectiveRow& row : c.rows()) {
    const NcclTestsColumns n = nccl_tests_columns(op, row.size_bytes, c.ranks(), c.config().root);
    std::snprintf(line, sizeof line, "%12lld  %12lld  %8s  %6s  %6d", static_cast<long long>(n.size), static_cast<long long>(n.count),
                  n.type, n.redop, n.root);
    out << line;
    const bool checked = row.data_check != "off";
    const bool wrong = checked && row.data_check != "passed";
    wrong_rows += wrong ? 1 : 0;
    for (int half = 0; half < 2; ++half) {
      const std::string time = row.time >= 0 ? nccl_tests_time(to_us(row.time)) : "    N/A";
      std::snprintf(line, sizeof line, "  %7s  %6.2f  %6.2f  %5s", time.c_str(), row.algbw_GBps, row.busbw_GBps,
                    checked ? (wrong ? "1" : "0") : "N/A");
      out << line;
    }
    out << "\n";
    if (row.time >= 0) {
      busbw_sum += 2 * row.busbw_GBps;  // out-of-place and in-place, as nccl-tests averages
      timed += 2;
    }
  }
  std::snprintf(line, sizeof line, "# %-20s : %d %s\n", "Out of bounds values", wrong_rows, wrong_rows ? "FAILED" : "OK");
  out << line;
  std::snprintf(line, sizeof line, "# %-20s : %g %s\n", "Avg bus bandwidth", timed ? busbw_sum / timed : 0.0, "");
  out << line << "#\n";
  // What nccl-tests does not show: how each size ran, and how far to trust it.
  const auto& rows = c.rows();
  out << "# fabricsim: per size, NCCL's algorithm and protocol, NCCL's own model's time, and the error band\n";
  if (std::any_of(rows.begin(), rows.end(), [](const CollectiveRow& r) { return r.error_band.found; })) {
    out << "# (error band: a 90% interval of simulated / measured busbw - 1 for rows like this one on a machine the corpus has not seen, docs/accuracy.md)\n";
  }
  std::snprintf(line, sizeof line, "# %10s  %-9s %-6s %12s %15s  %s\n", "size", "algo", "proto", "nccl(us)", "error band", "data");
  out << line;
  for (const CollectiveRow& row : rows) {
    char nccl[32] = "-";
    if (row.nccl_model_us >= 0) std::snprintf(nccl, sizeof nccl, "%.2f", row.nccl_model_us);
    char band[48] = "-";
    if (row.error_band.found) {
      std::snprintf(band, sizeof band, "%+.0f%%..%+.0f%%", row.error_band.low * 100, row.error_band.high * 100);
    }
    std::snprintf(line, sizeof line, "# %10lld  %-9s %-6s %12s %15s  %s\n", static_cast<long long>(row.size_bytes),
                  nccl_algo_name(row.algorithm), row.protocol.c_str(), nccl, band, row.data_check.c_str());
    out << line;
  }
}

}  // namespace fabricsim
