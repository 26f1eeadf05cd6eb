#include "app/workload/collective_request.h"

#include <algorithm>
#include <cctype>

namespace fabricsim {

namespace {

// The config's own collective settings, as overrides that keep them.
std::vector<std::string> kept_settings(const ScenarioConfig* base) {
  std::vector<std::string> kept;
  if (base == nullptr || !base->workload.is("collective")) return kept;
  const CollectiveConfig& c = base->workload.collective;
  kept.push_back("workload.algorithm=" + c.algorithm);
  if (c.protocol_given) kept.push_back("workload.protocol=" + c.protocol);
  if (!c.file.empty()) kept.push_back("workload.file=" + c.file);
  if (c.channels > 0) kept.push_back("workload.channels=" + std::to_string(c.channels));
  if (c.chunk_bytes > 0) kept.push_back("workload.chunk_bytes=" + std::to_string(c.chunk_bytes));
  if (c.local_size > 0) kept.push_back("workload.local_size=" + std::to_string(c.local_size));
  if (c.ranks > 0) kept.push_back("workload.ranks=" + std::to_string(c.ranks));
  if (c.root > 0) kept.push_back("workload.root=" + std::to_string(c.root));
  if (c.reduce_bytes_per_second > 0) {
    kept.push_back("workload.reduce_bandwidth=" + std::to_string(static_cast<std::int64_t>(c.reduce_bytes_per_second)) + "Bps");
  }
  return kept;
}

}  // namespace

std::vector<std::string> collective_sets(const ScenarioConfig* base, const CollectiveRequest& r,
                                         const std::vector<std::string>& workload_sets) {
  const std::vector<std::string> kept = kept_settings(base);
  std::vector<std::string> sets{"workload={}"};
  sets.insert(sets.end(), kept.begin(), kept.end());
  for (const std::string& s : workload_sets) {
    if (s.rfind("workload.", 0) == 0 && s.rfind("workload.kind=", 0) != 0) sets.push_back(s);
  }
  sets.push_back("workload.kind=collective");
  sets.push_back("workload.op=" + r.op.value_or("all_reduce"));
  // NCCL's choice unless told otherwise (nccl-tests runs whatever NCCL picks).
  if (r.algorithm || kept.empty()) sets.push_back("workload.algorithm=" + r.algorithm.value_or("auto"));
  if (r.protocol) {
    std::string proto = *r.protocol;
    for (char& ch : proto) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    sets.push_back("workload.protocol=" + proto);
  } else if (std::none_of(kept.begin(), kept.end(), [](const std::string& k) { return k.rfind("workload.protocol=", 0) == 0; })) {
    sets.push_back("workload.protocol=auto");  // NCCL's choice, as nccl-tests gets
  }
  if (r.nccl_version) sets.push_back("network.nccl_version=" + *r.nccl_version);
  sets.push_back("workload.sizes.from=" + r.min_bytes.value_or("8"));
  sets.push_back("workload.sizes.to=" + r.max_bytes.value_or("128MiB"));
  sets.push_back("workload.sizes.factor=" + r.step_factor.value_or("2"));
  if (r.file) sets.push_back("workload.file=" + *r.file);
  if (r.ranks) sets.push_back("workload.ranks=" + *r.ranks);
  if (r.channels) sets.push_back("workload.channels=" + *r.channels);
  sets.push_back(r.check_data ? "workload.check_data=true" : "workload.check_data=false");
  return sets;
}

}  // namespace fabricsim
