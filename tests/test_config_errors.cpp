// Every malformed config under tests/configs/bad names its file, line, column and key
// path. The expected location and message head sit on each file's first line,
// "# expect: LINE:COLUMN KEY.PATH: TEXT", worked out by counting characters in the file.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/config/config_error.h"
#include "app/config/config_loader.h"
#include "app/scenario/scenario.h"

using namespace fabricsim;
namespace fs = std::filesystem;

namespace {

std::string first_error(const std::string& path, const std::vector<std::string>& sets = {}) {
  try {
    ScenarioRun run(load_config_file(path, sets));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("malformed configs report file:line:column: error: key.path: expectation") {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(FABRICSIM_TEST_CONFIGS "/bad")) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 12);
  for (const fs::path& file : files) {
    CAPTURE(file.filename().string());
    std::ifstream in(file);
    std::string header;
    std::getline(in, header);
    const std::string tag = "# expect: ";
    REQUIRE(header.rfind(tag, 0) == 0);
    const std::string expect = header.substr(tag.size());
    const std::string location = expect.substr(0, expect.find(' '));
    const std::string rest = expect.substr(expect.find(' ') + 1);
    const std::string got = first_error(file.string());
    CHECK(got.rfind(file.string() + ":" + location + ": error: " + rest, 0) == 0);
    CHECK(got.find('\n') == std::string::npos);  // one line
  }
}

TEST_CASE("errors in --set values point at the option") {
  const std::string good = FABRICSIM_TEST_CONFIGS "/good/two_hosts_one_switch.yaml";
  CHECK(first_error(good) == "(no error)");
  CHECK(first_error(good, {"network.mtu=0"}).rfind("--set network.mtu=0: error: network.mtu: expected a size", 0) == 0);
  CHECK(first_error(good, {"messages[0].bytes=lots"})
            .rfind("--set messages[0].bytes=lots: error: messages[0].bytes: expected a size", 0) == 0);
  CHECK(first_error(good, {"network.colour=red"}).rfind("--set network.colour=red: error: network.colour: unknown key", 0) == 0);
  CHECK(first_error(good, {"nokey"}).rfind("--set nokey: error: expected KEY.PATH=VALUE", 0) == 0);
  CHECK(first_error(good, {"messages.7.bytes=1"}).rfind("--set messages.7.bytes=1: error: messages: expected an item number below 1", 0) == 0);
}

TEST_CASE("a missing file is an error that names it") {
  CHECK(first_error("/nonexistent/x.yaml") == "/nonexistent/x.yaml: error: cannot read the file");
}

TEST_CASE("a cyclic alias given by --set is an error at the option, not a crash") {
  const std::string good = FABRICSIM_TEST_CONFIGS "/good/two_hosts_one_switch.yaml";
  CHECK(first_error(good, {"network.x=&a [*a]"}).find("an alias here names a node that contains it (a cycle)") != std::string::npos);
}
