// `fabricsim validate`. One command, one file: its options, usage and what it runs.
#include "app/commands/command_support.h"

#include "topologies/oversubscription.h"

#include <cstdio>
#include <iostream>

#include "app/config/config_loader.h"
#include "app/output/results.h"
#include "sim/core/units.h"

namespace fabricsim {

namespace {

void add_options(po::options_description& options) {
  add_memory_limit_option(options);
  add_threads_options(options);
  add_fidelity_option(options);
  add_progress_option(options);
  add_set_option(options);
}

// What will run: the messages made before the run are counted above; a collective or a
// trace makes its own as it goes.
void describe_workload(const ScenarioRun& run) {
  if (const CollectiveSweep* c = run.collective()) {
    const CollectiveConfig& cc = c->config();
    std::cout << "  workload    collective " << op_name(cc.op) << " on " << c->ranks() << " ranks, algorithm " << cc.algorithm
              << ", " << cc.sizes.size() << " sizes from " << cc.sizes.front() << " to " << cc.sizes.back() << " bytes\n";
  }
  for (std::size_t j = 0; j < run.job_count(); ++j) {
    const CollectiveConfig& cc = run.job(j).config();
    std::cout << "  job         " << run.config().jobs[j].name << ": " << op_name(cc.op) << " on " << run.job(j).ranks()
              << " ranks, " << cc.sizes.size() << " sizes\n";
  }
  if (const TraceReplay* r = run.replay()) {
    std::cout << "  workload    trace of " << r->trace().ranks << " ranks, " << r->operation_count() << " operations\n";
  }
}

void describe_lossless(const NetworkConfig& n) {
  const LosslessConfig& l = n.lossless;
  std::cout << "  lossless    PFC ";
  if (l.pfc_classes_mask == 0) {
    std::cout << "off";
  } else {
    std::cout << "on classes";
    for (int c = 0; c < 8; ++c) {
      if ((l.pfc_classes_mask >> c) & 1u) std::cout << " " << c;
    }
  }
  std::cout << "; ECN ";
  if (l.ecn.enabled) {
    std::cout << "on (marking from " << l.ecn.kmin_bytes << " B to " << l.ecn.kmax_bytes << " B queued, up to "
              << l.ecn.pmax * 100 << "%, on " << (l.ecn.mark_on_dequeue ? "dequeue" : "enqueue") << ")";
  } else {
    std::cout << "off";
  }
  std::cout << "; congestion control "
            << (l.congestion_control ? l.congestion_control->name() : "none") << "; " << n.traffic_classes
            << " traffic class" << (n.traffic_classes == 1 ? "" : "es") << "\n";
}

void describe_oversubscription(const Topology& t) {
  const std::vector<TierOversubscription> tiers = oversubscription(t);
  std::cout << "  oversubscription";
  if (tiers.empty()) {
    std::cout << " none to measure (no switch has links both toward and away from the endpoints)\n";
    return;
  }
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    const TierOversubscription& o = tiers[i];
    char ratio[64];
    if (o.highest - o.lowest < 1e-9 * o.highest) {
      std::snprintf(ratio, sizeof ratio, "%.2f:1", o.lowest);
    } else {
      std::snprintf(ratio, sizeof ratio, "%.2f:1 to %.2f:1", o.lowest, o.highest);
    }
    std::cout << (i ? "; " : " ") << o.role << " " << ratio << " (" << o.switches << " switches)";
  }
  std::cout << "  (capacity toward the endpoints over capacity away from them)\n";
}

int validate_command(const po::variables_map& vm) {
  if (!vm.count("config")) {
    std::cerr << "fabricsim validate: needs a CONFIG file\n" << usage_hint("validate");
    return kExitBadInput;
  }
  const auto sets = config_sets(vm);
  ScenarioConfig config = load(vm["config"].as<std::string>(), sets);
  if (!apply_memory_limit(vm, config)) return kExitBadInput;
  if (!apply_threads(vm, config)) return kExitBadInput;
  const std::string name = config.name;
  ScenarioRun run(std::move(config), routing_progress(progress_style(vm)), trace_progress(progress_style(vm)),
                  setup_note(progress_style(vm)));  // builds the network too, so name errors show here
  std::cout << vm["config"].as<std::string>() << ": ok: " << name << ", " << run.network().host_count() << " hosts, "
            << run.network().switch_count() << " switches, " << run.network().directions().size() / 2 << " links, "
            << run.messages_created() << " messages made before the run\n";
  describe_workload(run);
  describe_lossless(run.config().network);
  describe_oversubscription(run.topology());
  std::cout << "  memory estimate " << run.memory_estimate().describe() << "\n";
  Time lookahead = kTimeMax;
  std::size_t credit_links = 0;
  for (const LinkDirection& d : run.network().directions()) {
    lookahead = std::min(lookahead, d.link->latency());
    if (d.port->credit_based()) ++credit_links;
  }
  std::cout << "  lookahead " << format_time(lookahead) << " (the smallest link latency: how far a parallel run may work ahead)\n";
  if (const ParallelEngine* engine = run.parallel()) {
    // What the split will cost: one synchronisation (two barrier waits, under a us on a few cores)
    // per window, and a window can be no longer than the lookahead.
    const ParallelStats& s = engine->stats();
    std::cout << "  split       " << s.partitions << " partitions on " << s.threads << " threads, " << s.cut_links
              << " cut links";
    if (s.lookahead == kTimeMax) {
      std::cout << " (nothing cut: one window)\n";
    } else {
      const double windows_per_ms = 1e9 / static_cast<double>(s.lookahead);
      std::cout << ", lookahead " << format_time(s.lookahead) << ": at least " << windows_per_ms
                << " synchronisations per simulated ms\n";
      if (s.lookahead < ns(100)) {
        std::cout << "  warning     the lookahead is tiny: a busy simulated ms costs at least "
                  << windows_per_ms * 1e-6 << " s of synchronisation alone (about 1 us each on a few cores, more on many: BM_WindowSync); "
                  << "expected cut links of 100 ns or more (fewer partitions, or cut elsewhere)\n";
      }
    }
  }
  std::cout << "  flow control " << credit_links / 2 << " credit-based links (InfiniBand, PCIe, NVLink), "
            << (run.network().directions().size() - credit_links) / 2 << " Ethernet\n";
  std::printf("  built in %.3f s; peak memory %.1f MB\n", run.setup_wall_seconds(), static_cast<double>(peak_memory_bytes()) / 1e6);
  return 0;
}

}  // namespace

const Command kValidateCommand{
    "validate",
    "fabricsim validate CONFIG [--threads N] [--memory-limit SIZE] [--set KEY=VALUE]...\n",
    "check CONFIG and print what it describes (sizes, memory estimate, lookahead, flow control), without running it",
    add_options,
    [](const po::variables_map& vm, int, char**) { return validate_command(vm); },
    false,
};

}  // namespace fabricsim
