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
// nccl-tests-style rows: size, count (floats), type, time, algbw, busbw (GB/s), the
// algorithm and protocol that ran, NCCL's own prediction, data check.
void print_collective_table(std::ostream& out, const CollectiveSweep& c);

}  // namespace fabricsim
