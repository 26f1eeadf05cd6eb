// `fabricsim calibrate`. One command, one file: its options, usage and what it runs.
#include "app/commands/command_support.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <unistd.h>

#include "app/config/config_loader.h"
#include "app/studies/calibration.h"
#include "app/config/profile.h"
#include "app/output/results.h"

namespace fabricsim {

namespace {

void add_options(po::options_description& options) {
  options.add_options()
      ("out,o", po::value<std::string>()->value_name("FILE"), "import, gpu: the profile to write")
      ("nccl-tests", po::value<std::vector<std::string>>()->multitoken()->value_name("LOG..."), "import: nccl-tests logs")
      ("perftest", po::value<std::vector<std::string>>()->multitoken()->value_name("LOG..."), "import: perftest logs")
      ("op", po::value<std::string>()->value_name("OP"), "import: the operation the logs ran (default all_reduce)")
      ("algo", po::value<std::string>()->value_name("ring|nvls"), "import: the algorithm the logs ran (default ring)")
      ("ranks", po::value<std::string>()->value_name("N"), "import: ranks the logs ran on")
      ("gpus-per-node", po::value<std::string>()->value_name("G"), "import: GPUs per node (default: all ranks in one)")
      ("nics-per-node", po::value<std::string>()->value_name("K"), "import: NICs per node (default: one per GPU)")
      ("cc", po::value<std::string>()->value_name("CC"), "import, NVLS logs: the GPUs' compute capability (default 90; 100 B200/GB200, 103 GB300)")
      ("nccl-version", po::value<std::string>()->value_name("VERSION"), "import, NVLS and AllToAll logs: the NCCL line that ran (default 2.28)")
      ("p2p-channels", po::value<std::string>()->value_name("N"), "import, AllToAll logs: NCCL's p2p channels, and per peer (default 32)")
      ("json", "gpu: print one JSON object")
      ("server", "nic: wait for the client")
      ("client", po::value<std::string>()->value_name("HOST"), "nic: measure towards HOST's server")
      ("device", po::value<std::string>()->value_name("NAME"), "nic: RDMA device (default: the first)")
      ("gid-index", po::value<int>()->value_name("N"), "nic: GID index (RoCE; default 0 there)")
      ("ib-port", po::value<int>()->value_name("N"), "nic: device port (default 1)")
      ("port", po::value<int>()->value_name("P"), "nic: TCP side-channel port (default 18515)");
}

int calibrate_import_command(const po::variables_map& vm) {
  ImportRequest request;
  if (vm.count("nccl-tests")) request.nccl_tests_logs = vm["nccl-tests"].as<std::vector<std::string>>();
  if (vm.count("perftest")) request.perftest_logs = vm["perftest"].as<std::vector<std::string>>();
  if (!vm.count("out") || (request.nccl_tests_logs.empty() && request.perftest_logs.empty())) {
    std::cerr << "fabricsim calibrate import: needs --nccl-tests LOG... or --perftest LOG..., and --out PROFILE.yaml\n" << usage_hint("calibrate");
    return kExitBadInput;
  }
  const auto positive = [&](const char* key, int& into) {
    if (!vm.count(key)) return true;
    const std::string v = vm[key].as<std::string>();
    try {
      std::size_t used = 0;
      into = std::stoi(v, &used);
      if (used == v.size() && into > 0) return true;
    } catch (const std::exception&) {
    }
    std::cerr << "fabricsim calibrate import: --" << key << ": expected a positive whole number, got '" << v << "'\n";
    return false;
  };
  if (!positive("ranks", request.ranks) || !positive("gpus-per-node", request.gpus_per_node) ||
      !positive("nics-per-node", request.nics_per_node) || !positive("cc", request.compute_capability) ||
      !positive("p2p-channels", request.p2p_channels)) {
    return kExitBadInput;
  }
  if (vm.count("nccl-version")) {
    const std::string v = vm["nccl-version"].as<std::string>();
    const auto rules = nccl_rules(v);
    if (!rules) {
      std::string known;
      for (const auto& k : nccl_rule_versions()) known += (known.empty() ? "" : ", ") + k;
      std::cerr << "fabricsim calibrate import: --nccl-version: expected an NCCL release from 2.18 on (rule sets: " << known
                << "), got '" << v << "'\n";
      return kExitBadInput;
    }
    request.nccl_version = rules->version;
  }
  if (vm.count("op")) {
    const std::string op = vm["op"].as<std::string>();
    const auto parsed = op_from_name(op);
    if (parsed) request.op = *parsed;
    if (!parsed) {
      std::cerr << "fabricsim calibrate import: --op: expected all_reduce, reduce_scatter, all_gather, broadcast, reduce,"
                   " all_to_all or send_recv, got '" << op << "'\n";
      return kExitBadInput;
    }
  }
  if (vm.count("algo")) {
    request.algorithm = vm["algo"].as<std::string>();
    if (request.algorithm != "ring" && request.algorithm != "nvls") {
      std::cerr << "fabricsim calibrate import: --algo: expected ring or nvls (the algorithm the log ran), got '"
                << request.algorithm << "'\n";
      return kExitBadInput;
    }
  }
  ImportResult result;
  try {
    result = import_logs(request);
  } catch (const std::exception& e) {  // an unreadable or malformed log, or one that cannot be translated
    std::cerr << "fabricsim calibrate import: " << e.what() << "\n";
    return kExitBadInput;
  }
  const std::string out = vm["out"].as<std::string>();
  write_file_atomically(out, profile_yaml(result.profile));
  std::cout << result.report << "profile written to " << out << "\n";
  return 0;
}

// The probes are executables of their own beside this one (fabricsim-probe-gpu, -nic), so
// that the simulator never loads CUDA or verbs: hand the command line over to them.
int run_probe(const std::string& what, int argc, char** argv) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path probe = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / ("fabricsim-probe-" + what);
  std::vector<char*> args{const_cast<char*>(probe.c_str())};
  int skipped = 0;  // the words "calibrate" and the probe's name, each once
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((skipped == 0 && a == "calibrate") || (skipped == 1 && a == what)) {
      ++skipped;
      continue;
    }
    args.push_back(argv[i]);
  }
  args.push_back(nullptr);
  std::cout.flush();
  execv(probe.c_str(), args.data());
  std::cerr << "fabricsim calibrate " << what << ": cannot run " << probe.string() << ": " << std::strerror(errno) << "\n";
  return kExitNoDevice;
}

int calibrate_command(const po::variables_map& vm, int argc, char** argv) {
  const std::string what = vm.count("config") ? vm["config"].as<std::string>() : "";
  if (what == "import") return calibrate_import_command(vm);
  if (what == "gpu" || what == "nic") return run_probe(what, argc, argv);
  std::cerr << "fabricsim calibrate: expected import, gpu or nic" << (what.empty() ? "" : ", got '" + what + "'") << "\n" << usage_hint("calibrate");
  return kExitBadInput;
}

}  // namespace

const Command kCalibrateCommand{
    "calibrate",
    "fabricsim calibrate import --nccl-tests LOG... | --perftest LOG... [--op OP] [--ranks N] [--algo ring|nvls]\n"
    "                    [--gpus-per-node G] [--nics-per-node K] [--cc CC] [--nccl-version V]\n"
    "                    [--p2p-channels N] --out PROFILE.yaml\n"
    "       fabricsim calibrate gpu [--out PROFILE.yaml] [--json]\n"
    "       fabricsim calibrate nic --server | --client HOST [--device NAME] [--gid-index N] [--port P]\n",
    "import: fit nccl-tests and perftest logs (alpha + size/beta) and write a link profile that a topology references with `profile: FILE` (docs/calibration.md); gpu: measure this machine's GPUs (CUDA): copies, peers, launch, reduce, matmul; nic: RDMA WRITE bandwidth sweep and ping-pong latency between two hosts (libibverbs); exit code 5 when there is no device to measure",
    add_options,
    calibrate_command,
    false,
};

}  // namespace fabricsim
