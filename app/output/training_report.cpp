#include "app/output/training_report.h"

#include <algorithm>
#include <cstdio>

#include "app/output/result_keys.h"

namespace fabricsim {

TrainingSummary summarize_training(const TraceReplay& replay) {
  TrainingSummary s;
  s.iteration = replay.iteration_time();
  const auto& ranks = replay.breakdown();
  if (ranks.empty()) return s;
  const double n = static_cast<double>(ranks.size());
  for (const RankBreakdown& b : ranks) {
    s.mean_compute_us += to_us(b.compute) / n;
    s.mean_communication_us += to_us(b.communication) / n;
    s.mean_exposed_us += to_us(b.exposed) / n;
    s.max_exposed_us = std::max(s.max_exposed_us, to_us(b.exposed));
    for (const auto& [label, t] : b.communication_by_label) s.mean_communication_us_by_label[label] += to_us(t) / n;
    for (const auto& [label, t] : b.exposed_by_label) s.mean_exposed_us_by_label[label] += to_us(t) / n;
  }
  s.exposed_fraction = s.iteration > 0 ? s.mean_exposed_us / to_us(s.iteration) : 0;
  return s;
}

void write_training_json(JsonWriter& j, const TraceReplay& replay) {
  const TrainingSummary s = summarize_training(replay);
  j.key(result_key::kTraining).begin_object();
  j.key("ranks").value(replay.trace().ranks);
  j.key("model").value(replay.model_description());
  j.key("compute_model").value(replay.trace().compute_description());
  if (replay.done()) {
    j.key(result_key::kIterationTimeUs).value(to_us(s.iteration));
  } else {
    j.key(result_key::kIterationTimeUs).null();  // it never finished (the run says why)
  }
  j.key("mean_compute_us").value(s.mean_compute_us);
  j.key("mean_communication_us").value(s.mean_communication_us);
  j.key("mean_exposed_communication_us").value(s.mean_exposed_us);
  j.key(result_key::kExposedCommunicationFraction).value(s.exposed_fraction);
  j.key("by_kind").begin_object();
  for (const auto& [label, t] : s.mean_communication_us_by_label) {
    j.key(label).begin_object();
    j.key("mean_communication_us").value(t);
    j.key("mean_exposed_us").value(s.mean_exposed_us_by_label.at(label));
    j.end_object();
  }
  j.end_object();
  // The critical path ends at the rank that finishes last: which, and by how much it
  // trails the next one (a straggler's own tail; what it cost the others shows against a
  // run without it, as `fabricsim whatif` does).
  const std::vector<RankBreakdown>& ranks = replay.breakdown();
  std::size_t last = 0;
  Time runner_up = 0;
  for (std::size_t r = 1; r < ranks.size(); ++r) {
    if (ranks[r].finish > ranks[last].finish) last = r;
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (r != last) runner_up = std::max(runner_up, ranks[r].finish);
  }
  if (!ranks.empty()) {
    j.key("critical_rank").value(static_cast<std::uint64_t>(last));
    j.key("critical_rank_compute_us").value(to_us(ranks[last].compute));
    j.key("critical_rank_lead_us").value(ranks.size() > 1 ? to_us(ranks[last].finish - runner_up) : 0.0);
  }
  j.key("per_rank").begin_array();
  for (const RankBreakdown& b : ranks) {
    j.begin_object();
    j.key("finish_us").value(to_us(b.finish));
    j.key("compute_us").value(to_us(b.compute));
    j.key("communication_us").value(to_us(b.communication));
    j.key("exposed_us").value(to_us(b.exposed));
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void print_training(std::ostream& out, const TraceReplay& replay) {
  const TrainingSummary s = summarize_training(replay);
  char line[256];
  if (!replay.done()) {
    std::snprintf(line, sizeof line, "  training  %d ranks: the step did not finish (operations still waiting)\n", replay.trace().ranks);
    out << line;
    return;
  }
  std::snprintf(line, sizeof line, "  training  %d ranks, iteration %.3f ms; per rank (mean) compute %.3f ms, communication %.3f ms, exposed %.3f ms (%.1f%%)\n",
                replay.trace().ranks, to_us(s.iteration) * 1e-3, s.mean_compute_us * 1e-3, s.mean_communication_us * 1e-3,
                s.mean_exposed_us * 1e-3, 100 * s.exposed_fraction);
  out << line;
  if (!replay.model_description().empty()) out << "            model: " << replay.model_description() << "\n";
  out << "            compute: " << replay.trace().compute_description() << "\n";
  for (const auto& [label, t] : s.mean_communication_us_by_label) {
    std::snprintf(line, sizeof line, "            %-4s communication %.3f ms, exposed %.3f ms\n", label.c_str(), t * 1e-3,
                  s.mean_exposed_us_by_label.at(label) * 1e-3);
    out << line;
  }
}

}  // namespace fabricsim
