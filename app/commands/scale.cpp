// `fabricsim scale`. One command, one file: its options, usage and what it runs.
#include "app/commands/command_support.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <unistd.h>

#include "app/config/config_loader.h"
#include "app/config/model_files.h"
#include "app/output/json_writer.h"
#include "app/output/training_report.h"
#include "workloads/traces/trace.h"

namespace fabricsim {

namespace {

void add_options(po::options_description& options) {
  options.add_options()
      ("dp-list", po::value<std::string>()->value_name("N,N,..."), "data-parallel sizes to run")
      ("json", "print the rows as a JSON array");
  add_parallelism_options(options, false);
  add_progress_option(options);
  add_set_option(options);
}

int scale_command(const po::variables_map& vm) {
  for (const char* required : {"config", "model", "gpu", "dp-list"}) {
    if (!vm.count(required)) {
      std::cerr << "fabricsim scale: needs " << (std::string(required) == "config" ? "a CONFIG" : std::string("--") + required) << "\n" << usage_hint("scale");
      return kExitBadInput;
    }
  }
  const ModelSpec model = load_model_file(vm["model"].as<std::string>());
  const GpuProfile gpu = load_gpu_profile(vm["gpu"].as<std::string>());
  std::vector<int> sizes;
  {
    std::istringstream in(vm["dp-list"].as<std::string>());
    std::string item;
    while (std::getline(in, item, ',')) {
      try {
        sizes.push_back(std::stoi(item));
      } catch (const std::exception&) {
        std::cerr << "fabricsim scale: --dp-list: expected numbers separated by commas, got '" << item << "'\n";
        return kExitBadInput;
      }
    }
  }
  struct Row {
    int dp, gpus;
    double iteration_ms, samples_per_s, exposed_fraction;
  };
  std::vector<Row> rows;
  const auto sets = config_sets(vm);
  for (int dp : sizes) {
    ParallelSpec par = parallel_from(vm);
    par.dp = dp;
    try {
      // The split is checked on one replica's worth of data parallelism (the step itself is
      // made by the run): cheap at any size.
      ParallelSpec check = par;
      check.dp = par.ep;
      if (par.dp % par.ep != 0) throw std::invalid_argument("ep " + std::to_string(par.ep) + " does not divide dp " + std::to_string(par.dp));
      (void)generate_transformer_trace(model, check, gpu);
    } catch (const std::invalid_argument& e) {
      std::cerr << "fabricsim scale: dp " << dp << ": " << e.what() << "\n";
      return kExitBadInput;
    }
    // The step is generated again by the run from the same files and numbers (in memory,
    // workload generate:), so nothing is written.
    std::vector<std::string> with = sets;
    with.push_back("workload={}");
    with.push_back("workload.kind=trace");
    with.push_back("workload.generate.model=" + std::filesystem::absolute(vm["model"].as<std::string>()).string());
    with.push_back("workload.generate.gpu=" + std::filesystem::absolute(vm["gpu"].as<std::string>()).string());
    with.push_back("workload.generate.tp=" + std::to_string(par.tp));
    with.push_back("workload.generate.pp=" + std::to_string(par.pp));
    with.push_back("workload.generate.dp=" + std::to_string(par.dp));
    with.push_back("workload.generate.ep=" + std::to_string(par.ep));
    with.push_back("workload.generate.microbatches=" + std::to_string(par.microbatches));
    with.push_back("workload.generate.bucket=" + std::to_string(par.bucket_bytes));
    with.push_back(std::string("workload.generate.zero=") + (par.zero ? "true" : "false"));
    with.push_back(std::string("workload.generate.recompute=") + (par.recompute ? "true" : "false"));
    with.push_back(std::string("workload.generate.dp_overlap=") + (par.overlap_dp ? "true" : "false"));
    ScenarioRun run(load(vm["config"].as<std::string>(), with));
    const ProgressStyle style = progress_style(vm);
    run.run(run_progress(style));
    if (style.terminal && run.events() > ScenarioRun::kFirstProgressEvents) std::fputs("\n", stderr);
    if (!run.replay()->done()) {
      std::cerr << "fabricsim scale: dp " << dp << ": the step did not finish\n";
      return kExitFailure;
    }
    const TrainingSummary s = summarize_training(*run.replay());
    const double seconds = to_seconds(s.iteration);
    rows.push_back({dp, run.replay()->trace().ranks, seconds * 1e3,
                    static_cast<double>(dp) * par.microbatches * static_cast<double>(model.micro_batch) / seconds, s.exposed_fraction});
  }
  const auto efficiency = [&](const Row& r) {
    return (r.samples_per_s / rows.front().samples_per_s) / (static_cast<double>(r.dp) / rows.front().dp);
  };
  if (vm.count("json")) {
    JsonWriter j;
    j.begin_array();
    for (const Row& r : rows) {
      j.begin_object();
      j.key("dp").value(r.dp).key("gpus").value(r.gpus).key("iteration_ms").value(r.iteration_ms);
      j.key("samples_per_second").value(r.samples_per_s).key("exposed_communication_fraction").value(r.exposed_fraction);
      j.key("scaling_efficiency").value(efficiency(r));
      j.end_object();
    }
    j.end_array();
    std::cout << j.str() << "\n";
    return 0;
  }
  std::cout << "# fabricsim scale: " << model.name << ", tp " << parallel_from(vm).tp << " pp " << parallel_from(vm).pp
            << ", weak scaling (micro-batches per replica fixed)\n";
  std::printf("  %6s %6s %14s %14s %10s %12s\n", "dp", "gpus", "iteration(ms)", "samples/s", "exposed", "efficiency");
  for (const Row& r : rows) {
    std::printf("  %6d %6d %14.3f %14.3f %9.1f%% %11.1f%%\n", r.dp, r.gpus, r.iteration_ms, r.samples_per_s, 100 * r.exposed_fraction,
                100 * efficiency(r));
  }
  return 0;
}

}  // namespace

const Command kScaleCommand{
    "scale",
    "fabricsim scale CONFIG --model MODEL.yaml --tp T --pp P --microbatches M --gpu PROFILE.yaml --dp-list 1,2,4 [--ep E] [--zero] [--recompute] [--no-dp-overlap] [--json]\n",
    "the same model at several data-parallel sizes on CONFIG's fabric: iteration time, samples per second and weak-scaling efficiency per size",
    add_options,
    [](const po::variables_map& vm, int, char**) { return scale_command(vm); },
    false,
};

}  // namespace fabricsim
