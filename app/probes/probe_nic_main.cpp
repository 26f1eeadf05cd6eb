// fabricsim-probe-nic: the measuring half of `fabricsim calibrate nic`, which runs
// this executable; kept apart so the simulator itself never links the verbs libraries.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "app/studies/calibration.h"
#include "app/output/json_writer.h"
#include "app/probes/probe_cli.h"
#include "app/config/profile.h"
#include "app/output/results.h"
#include "calibrate/nic_probe.h"

namespace po = boost::program_options;
using namespace fabricsim;

namespace {

int probe_nic(const po::variables_map& vm) {
  NicProbeOptions o;
  o.server = vm.count("server") > 0;
  if (vm.count("client")) o.host = vm["client"].as<std::string>();
  if (o.server == !o.host.empty()) {
    std::cerr << "fabricsim calibrate nic: give exactly one of --server and --client HOST\n" << "usage: fabricsim calibrate nic --server | --client HOST [--device NAME] [--gid-index N] [--ib-port N] [--port P] [--out PROFILE.yaml]\n";
    return kExitProbeBadInput;
  }
  if (vm.count("device")) o.device = vm["device"].as<std::string>();
  if (vm.count("gid-index")) o.gid_index = vm["gid-index"].as<int>();
  if (vm.count("ib-port")) o.ib_port = vm["ib-port"].as<int>();
  if (vm.count("port")) o.port = vm["port"].as<int>();
  const NicProbeResult r = run_nic_probe(o, probe_progress);
  end_progress();
  if (r.outcome != NicProbeResult::Outcome::kMeasured) {
    std::cerr << "fabricsim calibrate nic: " << r.message << "\n";
    return kExitNoDevice;
  }
  if (o.server) {
    std::cout << "fabricsim calibrate nic: served a client on " << r.device << " (" << r.link_layer << ")\n";
    return 0;
  }
  // perftest's layout, so the same import reads it back.
  char row[160];
  std::cout << "# fabricsim calibrate nic: RC RDMA WRITE, " << r.device << " (" << r.link_layer << ") to " << o.host << "\n";
  std::cout << " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n";
  for (const auto& s : r.bandwidth.samples) {
    std::snprintf(row, sizeof row, " %-10lld %-14s %-18.2f %-20.2f %.6f\n", static_cast<long long>(s.bytes), "-", s.bandwidth_Gbps,
                  s.bandwidth_Gbps, s.bandwidth_Gbps * 1e3 / 8 / static_cast<double>(s.bytes));
    std::cout << row;
  }
  std::cout << " #bytes #iterations    t_typical[usec]\n";
  for (const auto& s : r.latency.samples) {
    std::snprintf(row, sizeof row, " %-7lld %-14s %.3f\n", static_cast<long long>(s.bytes), "-", s.latency_us);
    std::cout << row;
  }
  if (vm.count("out")) {
    LinkProfile p;
    std::string report;
    apply_perftest(r.bandwidth, "fabricsim calibrate nic " + r.device, p, report);
    apply_perftest(r.latency, "fabricsim calibrate nic " + r.device, p, report);
    write_file_atomically(vm["out"].as<std::string>(), profile_yaml(p));
    std::cout << report << "profile written to " << vm["out"].as<std::string>() << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description options("fabricsim calibrate nic options");
  options.add_options()
      ("server", "wait for the client")
      ("client", po::value<std::string>()->value_name("HOST"), "measure towards HOST's server")
      ("device", po::value<std::string>()->value_name("NAME"), "RDMA device (default: the first)")
      ("gid-index", po::value<int>()->value_name("N"), "GID index (RoCE; default 0 there)")
      ("ib-port", po::value<int>()->value_name("N"), "device port (default 1)")
      ("port", po::value<int>()->value_name("P"), "TCP side-channel port (default 18515)")
      ("out,o", po::value<std::string>()->value_name("PROFILE.yaml"), "write a link profile");
  return probe_main(argc, argv, "nic", options, probe_nic);
}
