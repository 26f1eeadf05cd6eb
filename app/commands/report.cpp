// `fabricsim report`. One command, one file: its options, usage and what it runs.
#include "app/commands/command_support.h"

#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "app/output/results.h"
#include "app/report/html_report.h"

namespace fabricsim {

namespace {

void add_options(po::options_description& options) {
  options.add_options()("out,o", po::value<std::string>()->value_name("FILE"), "where the HTML goes (default DIR/report.html)");
}

int report_command(const po::variables_map& vm) {
  if (!vm.count("config")) {
    std::cerr << "fabricsim report: needs a DIR (a run's, a sweep's or a what-if's output folder)\n" << usage_hint("report");
    return kExitBadInput;
  }
  const std::string dir = vm["config"].as<std::string>();
  std::string html;
  try {
    html = html_report(dir);
  } catch (const std::runtime_error& e) {
    std::cerr << "fabricsim report: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  const std::string out = vm.count("out") ? vm["out"].as<std::string>() : (std::filesystem::path(dir) / "report.html").string();
  write_file_atomically(out, html);
  std::cout << "fabricsim report: wrote " << out << " (" << html.size() / 1024 + 1 << " KiB, self-contained)\n";
  return 0;
}

}  // namespace

const Command kReportCommand{
    "report",
    "fabricsim report DIR [--out FILE]\n",
    "one self-contained HTML file for a run, sweep or what-if folder: its facts, tables and charts (inline SVG), and links to its timeline for Perfetto",
    add_options,
    [](const po::variables_map& vm, int, char**) { return report_command(vm); },
    false,
};

}  // namespace fabricsim
