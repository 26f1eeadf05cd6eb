#pragma once
// A replayed training step in numbers: iteration time, and per rank compute,
// communication and exposed communication, with the communication split by what it is
// for (tp, pp, dp, ep).
#include <map>
#include <ostream>
#include <string>

#include "app/output/json_writer.h"
#include "workloads/traces/trace_replay.h"

namespace fabricsim {

struct TrainingSummary {
  Time iteration = 0;
  double mean_compute_us = 0, mean_communication_us = 0, mean_exposed_us = 0;
  double max_exposed_us = 0;
  double exposed_fraction = 0;  // mean exposed / iteration
  std::map<std::string, double> mean_communication_us_by_label, mean_exposed_us_by_label;
};

TrainingSummary summarize_training(const TraceReplay& replay);
void write_training_json(JsonWriter& j, const TraceReplay& replay);
void print_training(std::ostream& out, const TraceReplay& replay);

}  // namespace fabricsim
