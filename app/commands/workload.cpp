// `fabricsim workload`. One command, one file: its options, usage and what it runs.
#include "app/commands/command_support.h"

#include <iostream>

#include "app/config/config_loader.h"
#include "app/config/model_files.h"
#include "sim/core/units.h"
#include "workloads/traces/trace.h"

namespace fabricsim {

namespace {

void add_options(po::options_description& options) {
  options.add_options()
      ("out,o", po::value<std::string>()->value_name("FILE"), "the trace to write")
      ("bucket", po::value<std::string>()->value_name("SIZE"), "gradient bucket (default 25MiB)");
  add_parallelism_options(options, true);
}

int workload_gen_command(const po::variables_map& vm) {
  for (const char* required : {"model", "gpu", "out"}) {
    if (!vm.count(required)) {
      std::cerr << "fabricsim workload gen: needs --" << required << "\n" << usage_hint("workload");
      return kExitBadInput;
    }
  }
  const ModelSpec model = load_model_file(vm["model"].as<std::string>());
  const GpuProfile gpu = load_gpu_profile(vm["gpu"].as<std::string>());
  ParallelSpec par = parallel_from(vm);
  if (vm.count("bucket")) {
    const auto b = parse_bytes(vm["bucket"].as<std::string>());
    if (!b || *b < 1) {
      std::cerr << "fabricsim workload gen: --bucket: expected " << kBytesUnitsHelp << "\n";
      return kExitBadInput;
    }
    par.bucket_bytes = *b;
  }
  Trace trace;
  try {
    trace = generate_transformer_trace(model, par, gpu);
  } catch (const std::invalid_argument& e) {
    std::cerr << "fabricsim workload gen: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  write_trace(trace, vm["out"].as<std::string>());
  std::size_t ops = 0;
  for (const auto& r : trace.ops) ops += r.size();
  std::cout << "fabricsim workload gen: " << model.name << " tp " << par.tp << " pp " << par.pp << " dp " << par.dp << " ep "
            << par.ep << ", " << par.microbatches << " micro-batches: " << trace.ranks << " ranks, " << ops << " operations -> "
            << vm["out"].as<std::string>() << "\n";
  return 0;
}

}  // namespace

const Command kWorkloadCommand{
    "workload",
    "fabricsim workload gen --model MODEL.yaml --tp T --pp P --dp D [--ep E] --microbatches M --gpu PROFILE.yaml [--zero] [--recompute] [--no-dp-overlap] [--bucket SIZE] -o TRACE.jsonl\n",
    "write a training-step trace for a transformer (configs/models) under tensor, pipeline (1F1B), data and expert parallelism; replay it with a config whose workload is {kind: trace, file: TRACE.jsonl} (docs/traces.md)",
    add_options,
    [](const po::variables_map& vm, int, char**) { return workload_gen_command(vm); },
    true,
};

}  // namespace fabricsim
