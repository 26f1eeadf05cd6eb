#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "sim/net/egress_port.h"
#include "sim/endpoint/nic.h"
#include "sim/core/simulator.h"

using namespace fabricsim;

namespace {
// Four hosts in two groups of two; the endpoint under test is host 1, with one port.
// Set 1 of every table here is {port 0}; set 0 is no port.
RouteTable table(std::vector<std::uint32_t> by_group, std::vector<std::uint32_t> by_host) {
  RouteTable t;
  t.ports = {0};
  t.set_offset = {0, 0, 1};
  t.by_group = std::move(by_group);
  t.default_set = 1;
  t.first_host = 0;
  t.by_host = std::move(by_host);
  return t;
}
constexpr std::uint32_t kNo = RouteTable::kNoException;

struct OneHost {
  Simulator sim{1};
  EgressPort port{sim, Bandwidth::gbps(100), 1, 1 << 20};
  Nic nic{sim, 1, NicConfig{}, nullptr};
  std::vector<std::uint32_t> groups{0, 0, 1, 1};
  OneHost() { nic.add_port(port); }
  std::vector<std::uint64_t> toward() const {
    return {nic.ports_toward(0), nic.ports_toward(1), nic.ports_toward(2), nic.ports_toward(3)};
  }
};
}  // namespace

// An endpoint with one port skips its table when the table says "port 0" for every
// other host and "none" for itself; it must answer exactly as the table would.
TEST_CASE("a one-port endpoint's routes: port 0 to every other host, none to itself") {
  OneHost h;
  h.nic.set_routes(table({}, {kNo, 0, kNo, kNo}), &h.groups);
  CHECK(h.toward() == std::vector<std::uint64_t>{1, 0, 1, 1});
}

TEST_CASE("a one-port endpoint's routes: an unreachable group stays unreachable") {
  OneHost h;
  h.nic.set_routes(table({1, 0}, {kNo, 0, kNo, kNo}), &h.groups);
  CHECK(h.toward() == std::vector<std::uint64_t>{1, 0, 0, 0});
}

TEST_CASE("a one-port endpoint's routes: an unreachable neighbour stays unreachable") {
  OneHost h;
  h.nic.set_routes(table({}, {0, 0, kNo, kNo}), &h.groups);
  CHECK(h.toward() == std::vector<std::uint64_t>{0, 0, 1, 1});
}

TEST_CASE("a one-port endpoint's routes: a table that names port 0 for the host itself is kept") {
  OneHost h;
  h.nic.set_routes(table({}, {}), &h.groups);
  CHECK(h.toward() == std::vector<std::uint64_t>{1, 1, 1, 1});
}
