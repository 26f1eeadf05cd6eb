#pragma once
// A collective's figures as results.json and the terminal show them: which model ran,
// one row per size as nccl-tests reports it, and the table.
#include <ostream>

#include "app/workload/collective_sweep.h"
#include "app/output/json_writer.h"

namespace fabricsim {

// Which model a collective ran (protocol, model, nccl_version) and where its system lies
// outside the accuracy corpus (validation_gaps).
void write_model_fields(JsonWriter& j, const CollectiveSweep& c);
// One collective size's figures, as nccl-tests reports them (time_us null if unfinished).
void write_row_fields(JsonWriter& j, const CollectiveRow& row);
// What nccl-tests prints before the times for a test of `size` bytes of floats over
// `ranks`: count is the per-rank parameter (AllGather, ReduceScatter and AlltoAll split
// the buffer, rounded down to 16 bytes a rank), size the larger buffer; root -1 for
// operations without one.
struct NcclTestsColumns {
  std::int64_t size = 0;
  std::int64_t count = 0;
  const char* type = "float";
  const char* redop = "sum";
  int root = -1;
};
NcclTestsColumns nccl_tests_columns(CollectiveOp op, std::int64_t size, std::int64_t ranks, int root);
// The table as nccl-tests prints it (header, units row, a row per size with per-rank
// counts, out-of-place and in-place, `# Avg bus bandwidth`), then, as '#' lines, the
// algorithm and protocol that ran, NCCL's own prediction and the error band per size.
void print_collective_table(std::ostream& out, const CollectiveSweep& c);

}  // namespace fabricsim
