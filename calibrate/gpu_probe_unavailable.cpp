// The GPU probe where the CUDA Toolkit was not found at build time.
#include "calibrate/gpu_probe.h"

namespace fabricsim {

GpuProbeResult run_gpu_probe(const GpuProbeOptions&, const std::function<void(const std::string&)>&) {
  GpuProbeResult r;
  r.outcome = GpuProbeResult::Outcome::kNotBuilt;
  r.message = "no CUDA support in this build (nvcc was not found when fabricsim was built)";
  return r;
}

}  // namespace fabricsim
