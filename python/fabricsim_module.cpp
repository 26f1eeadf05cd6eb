// `fabricsim._fabricsim`: the engine as the Python package (python/fabricsim/) sees it.
// It loads configs, runs them and describes fabrics through the same library functions
// the commands call, and hands results over as results.json's text, so a Python run and
// `fabricsim run` write the same figures by construction.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/config/config_error.h"
#include "app/config/config_loader.h"
#include "app/output/collective_report.h"
#include "app/output/results.h"
#include "app/output/topology_json.h"
#include "app/scenario/scenario.h"
#include "app/workload/collective_request.h"
#include "topologies/analysis.h"
#include "workloads/collectives/collective_algorithms.h"

namespace py = pybind11;

namespace fabricsim {
namespace {

// Where a rank sits, for algorithms written in Python: its endpoint, its node (the
// NVSwitch domain it shares with the node's other GPUs) and its place in the node, which
// on a rail-optimized cluster is also its rail.
struct RankPlace {
  int rank;
  std::string endpoint;
  int node;
  int local;
};

std::vector<RankPlace> rank_places(const ScenarioConfig& config) {
  const ScenarioRun built(config);  // the fabric as a run builds it: names as results use them
  const Topology& t = built.topology();
  int per_node = 1;
  if (config.topology.kind == TopologyConfig::Kind::kCluster) per_node = std::max(1, config.topology.cluster.node.gpus);
  if (config.topology.kind == TopologyConfig::Kind::kNvSwitch) per_node = static_cast<int>(t.host_count());
  std::vector<RankPlace> out;
  for (std::uint32_t h = 0; h < t.host_count(); ++h) {
    const int r = static_cast<int>(h);
    out.push_back({r, t.node(t.host_node(h)).name, r / per_node, r % per_node});
  }
  return out;
}

std::string run_config(ScenarioConfig config, int threads, int partitions, const std::function<void(py::dict)>& progress,
                       const std::string& records) {
  if (threads > 0) config.threads = threads;
  if (partitions > 0) config.partitions = partitions;
  std::string results;
  {
    // The run holds no Python object; progress takes the GIL back to report.
    py::gil_scoped_release release;
    ScenarioRun run(std::move(config));
    if (!records.empty()) run.message_log().record_to(records);
    std::function<void(const Progress&)> hear;
    if (progress) {
      hear = [&progress](const Progress& p) {
        py::gil_scoped_acquire acquire;
        py::dict d;
        d["sim_time_ps"] = p.sim_time;
        d["events"] = p.events;
        d["messages_finished"] = p.messages_finished;
        d["messages_total"] = p.messages_total;
        d["wall_seconds"] = p.wall_seconds;
        progress(d);
      };
    }
    run.run(hear);
    if (run.job_count() > 1) run.measure_jobs_alone();
    run.message_log().finish_records();
    results = results_json(run);
  }
  return results;
}

CollectiveRequest request_from(const py::dict& d) {
  CollectiveRequest r;
  r.for_each_text_field([&d](const char* key, std::optional<std::string>& field) {
    if (d.contains(key) && !d[key].is_none()) field = py::str(d[key]).cast<std::string>();
  });
  r.check_data = d.contains("check_data") && d["check_data"].cast<bool>();
  return r;
}

}  // namespace
}  // namespace fabricsim

PYBIND11_MODULE(_fabricsim, m) {
  using namespace fabricsim;
  m.doc() = "fabricsim's engine (use the fabricsim package, not this module)";
  m.attr("version") = FABRICSIM_VERSION;

  // A config error carries where (FILE:LINE:COLUMN, or the override that gave the
  // value), the key's path and what was expected; the package splits `where`.
  static py::exception<ConfigError> config_error(m, "ConfigError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      py::object error = py::reinterpret_borrow<py::object>(config_error.ptr())(e.what());
      error.attr("where") = e.where();
      error.attr("key") = e.path();
      error.attr("detail") = e.detail();
      PyErr_SetObject(config_error.ptr(), error.ptr());
    }
  });

  py::class_<ScenarioConfig>(m, "Config", "a validated scenario")
      .def_readonly("name", &ScenarioConfig::name)
      .def_readonly("file", &ScenarioConfig::file)
      .def_property_readonly("workload_kind", [](const ScenarioConfig& c) { return c.workload.kind; })
      .def_property_readonly("collective_root", [](const ScenarioConfig& c) { return c.workload.collective.root; })
      .def_property_readonly("fidelity", [](const ScenarioConfig& c) {
        return c.network.fidelity == NetworkConfig::Fidelity::kFlow ? "flow" : "packet";
      });

  m.def("load_file", &load_config_file, py::arg("path"), py::arg("overrides"));
  m.def("load_text", &load_config_text, py::arg("text"), py::arg("name"), py::arg("overrides"));
  m.def("run", &run_config, py::arg("config"), py::arg("threads") = 0, py::arg("partitions") = 0,
        py::arg("progress") = nullptr, py::arg("records") = std::string(),
        "runs the scenario (its messages' records to `records`, a JSON Lines file, when given); returns results.json's text");
  m.def(
      "topology",
      [](const ScenarioConfig& config) {
        const ScenarioRun built(config);
        return topology_json(config.name, summarize(built.topology()));
      },
      py::arg("config"), "`fabricsim topo --json`'s object, as text");
  m.def(
      "links",
      [](const ScenarioConfig& config) {
        const ScenarioRun built(config);
        const Topology& t = built.topology();
        std::vector<std::tuple<std::string, std::string, double, double, std::string>> out;
        for (const TopologyLink& l : t.links()) {
          out.emplace_back(t.node(l.a).name, t.node(l.b).name, static_cast<double>(l.bandwidth.bits_per_second),
                           static_cast<double>(l.latency), l.tier);
        }
        return out;
      },
      py::arg("config"), "the fabric's links: (a, b, bandwidth_bps, latency_ps, tier)");
  m.def(
      "ranks",
      [](const ScenarioConfig& config) {
        std::vector<std::tuple<int, std::string, int, int>> out;
        for (const RankPlace& p : rank_places(config)) out.emplace_back(p.rank, p.endpoint, p.node, p.local);
        return out;
      },
      py::arg("config"), "each endpoint as a rank: (rank, endpoint, node, local)");
  m.def(
      "collective_overrides",
      [](const ScenarioConfig* base, const py::dict& request) { return collective_sets(base, request_from(request)); },
      py::arg("base").none(true), py::arg("request"), "the overrides that turn a config into a collective sweep");
  m.def(
      "nccl_tests_columns",
      [](const std::string& op, std::int64_t size, std::int64_t ranks, int root) {
        const auto parsed = op_from_name(op);
        if (!parsed) throw py::value_error("unknown operation '" + op + "'");
        const NcclTestsColumns c = nccl_tests_columns(*parsed, size, ranks, root);
        return py::make_tuple(c.size, c.count, c.type, c.redop, c.root);
      },
      py::arg("op"), py::arg("size"), py::arg("ranks"), py::arg("root"),
      "nccl-tests' size, count, type, redop and root columns for a row of `size` bytes");
  m.def("algorithm_names", &algorithm_names);
}
