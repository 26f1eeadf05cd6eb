#pragma once
// An nccl-tests-style sweep asked of a config, as `fabricsim collective` and the Python
// package's collective() ask it: the --set overrides that turn the config into that
// sweep, made in one place so both run the same model.
#include <optional>
#include <string>
#include <vector>

#include "app/config/config.h"

namespace fabricsim {

// Each as its flag gives it (unset: not given).
struct CollectiveRequest {
  std::optional<std::string> op;            // default all_reduce
  std::optional<std::string> algorithm;     // default: the config's, else auto
  std::optional<std::string> protocol;      // default: the config's, else auto
  std::optional<std::string> nccl_version;
  std::optional<std::string> min_bytes;     // default 8
  std::optional<std::string> max_bytes;     // default 128MiB
  std::optional<std::string> step_factor;   // default 2
  std::optional<std::string> file;          // msccl / steps
  std::optional<std::string> ranks;
  std::optional<std::string> channels;
  bool check_data = false;

  // Each of the fields above that holds text, by its name (the Python package's keyword).
  template <class Visit>
  void for_each_text_field(Visit&& visit) {
    visit("op", op);
    visit("algorithm", algorithm);
    visit("protocol", protocol);
    visit("nccl_version", nccl_version);
    visit("min_bytes", min_bytes);
    visit("max_bytes", max_bytes);
    visit("step_factor", step_factor);
    visit("file", file);
    visit("ranks", ranks);
    visit("channels", channels);
  }
};

// The overrides to append to the config's own: the command line describes the workload
// and replaces any in the config, but the config's collective settings (algorithm,
// protocol, channels, chunk, ...) hold unless the request overrides them. `base` is the
// config as loaded with its own overrides (null where its workload does not load).
// `workload_sets`: the caller's own overrides of workload keys (--set workload.chunk_bytes=...),
// applied again after the config's workload is replaced, so they hold too; the request's
// flags still win over them.
std::vector<std::string> collective_sets(const ScenarioConfig* base, const CollectiveRequest& request,
                                         const std::vector<std::string>& workload_sets = {});

}  // namespace fabricsim
