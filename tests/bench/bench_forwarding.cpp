// Packet forwarding through a chain of switches: host - s1 - ... - s(h-1) - host, with
// several flows sharing the chain so queues stay busy. items_per_second is packet-hops
// per second (every packet transmission over a link, data and acks, counted from the
// ports' own counters) of the whole simulator: NIC, ports, links, switches, queue.
#include <benchmark/benchmark.h>

#include <string>

#include "sim/network.h"
#include "topologies/compile.h"

namespace {

using namespace fabricsim;

void BM_ForwardingChain(benchmark::State& state) {
  const int links = static_cast<int>(state.range(0));
  constexpr int kFlows = 4;
  constexpr std::int64_t kBytesPerFlow = 4 * 1024 * 1024;  // 1024 packets of 4 KiB each
  // Four senders on the first switch, one receiver at the far end of the chain.
  Topology t;
  for (int f = 0; f < kFlows; ++f) t.add_host("src" + std::to_string(f));
  const auto dst = t.add_host("dst");
  std::uint32_t prev = t.add_switch("s0");
  for (int f = 0; f < kFlows; ++f) t.connect(t.host_node(f), prev, Bandwidth::gbps(400), ns(100), "edge");
  for (int i = 1; i < links; ++i) {
    const auto s = t.add_switch("s" + std::to_string(i));
    t.connect(prev, s, Bandwidth::gbps(400), ns(100), "chain");
    prev = s;
  }
  t.connect(prev, dst, Bandwidth::gbps(400), ns(100), "edge");

  std::uint64_t hops = 0, events = 0;
  for (auto _ : state) {
    Simulator sim(1);
    auto net = compile_network(t, sim, {});
    for (int f = 0; f < kFlows; ++f) net->post(net->add_message(static_cast<HostId>(f), kFlows, kBytesPerFlow));
    sim.run();
    for (const LinkDirection& d : net->directions()) hops += d.port->counters().total.packets_sent;
    events += sim.events_processed();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(hops));
  state.counters["events_per_second"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ForwardingChain)->Name("BM_ForwardingChain")->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond);

}  // namespace
