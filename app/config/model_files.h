#pragma once
// Model and GPU-profile files for the trace generator (configs/models, configs/gpus),
// read with the same located errors as configs.
#include <string>

#include "workloads/traces/transformer_trace.h"

namespace fabricsim {

ModelSpec load_model_file(const std::string& path);
GpuProfile load_gpu_profile(const std::string& path);

}  // namespace fabricsim
