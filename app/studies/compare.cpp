#include "app/studies/compare.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "app/config/yaml_safety.h"
#include "app/output/json_writer.h"
#include "app/output/result_keys.h"

namespace fabricsim {

namespace {

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

double number(const YAML::Node& n) {
  if (!n || !n.IsScalar()) return kNone;
  try {
    return n.as<double>();
  } catch (const YAML::Exception&) {
    return kNone;
  }
}

// The figures an architect compares, from one results.json (JSON is YAML).
std::vector<std::pair<std::string, double>> figures_of(const YAML::Node& r) {
  std::vector<std::pair<std::string, double>> f;
  f.emplace_back("complete", r[result_key::kComplete] && r[result_key::kComplete].as<bool>() ? 1.0 : 0.0);
  f.emplace_back("sim_time_us", number(r[result_key::kSimTimePs]) * 1e-6);
  if (const YAML::Node c = r[result_key::kCollective]; c && c[result_key::kRows] && c[result_key::kRows].size() > 0) {
    const YAML::Node last = c[result_key::kRows][c[result_key::kRows].size() - 1];
    f.emplace_back("collective_time_us (largest size)", number(last[result_key::kTimeUs]));
    f.emplace_back("busbw_GBps (largest size)", number(last[result_key::kBusbwGBps]));
  }
  if (const YAML::Node t = r[result_key::kTraining]) {
    f.emplace_back("iteration_time_us", number(t[result_key::kIterationTimeUs]));
    f.emplace_back("exposed_communication_fraction", number(t[result_key::kExposedCommunicationFraction]));
  }
  if (const YAML::Node w = r[result_key::kWorkload]) {
    f.emplace_back("fct_p50_us", number(w[result_key::kFctUs][result_key::kP50]));
    f.emplace_back("fct_p99_us", number(w[result_key::kFctUs][result_key::kP99]));
    f.emplace_back("slowdown_p50", number(w[result_key::kSlowdown][result_key::kP50]));
    f.emplace_back("slowdown_p99", number(w[result_key::kSlowdown][result_key::kP99]));
  }
  double drops = 0, pauses = 0, busiest = 0;
  for (const YAML::Node& l : r[result_key::kLinks]) {
    if (l[result_key::kDrops]) drops += number(l[result_key::kDrops]);
    if (l[result_key::kPausesSent]) pauses += number(l[result_key::kPausesSent]);
    busiest = std::max(busiest, number(l[result_key::kUtilization]));
  }
  f.emplace_back("max_link_utilization", busiest);
  f.emplace_back("drops", drops);
  f.emplace_back("pfc_pauses", pauses);
  // Every endpoint counter the run wrote (the NIC declares them; nothing here names them).
  for (const auto& counter : r[result_key::kEndpoints]) f.emplace_back(counter.first.as<std::string>(), number(counter.second));
  f.emplace_back("wall_seconds", number(r[result_key::kWallSeconds]));
  return f;
}

}  // namespace

std::vector<CompareFigure> compare_results(const std::vector<std::string>& files) {
  std::vector<CompareFigure> out;
  for (std::size_t i = 0; i < files.size(); ++i) {
    YAML::Node r;
    try {
      r = YAML::LoadFile(files[i]);
      check_yaml_structure(r, files[i]);
    } catch (const YAML::Exception& e) {
      throw std::runtime_error(files[i] + ": cannot read it as results.json: " + e.msg);
    }
    if (!r.IsMap() || !r[result_key::kSimTimePs]) throw std::runtime_error(files[i] + ": expected a fabricsim results.json");
    for (const auto& [name, value] : figures_of(r)) {
      auto it = std::find_if(out.begin(), out.end(), [&](const CompareFigure& f) { return f.name == name; });
      if (it == out.end()) {
        out.push_back({name, std::vector<double>(files.size(), kNone)});
        it = out.end() - 1;
      }
      it->values[i] = value;
    }
  }
  return out;
}

void print_comparison(std::ostream& out, const std::vector<std::string>& files, const std::vector<CompareFigure>& figures) {
  char cell[96];
  for (std::size_t i = 0; i < files.size(); ++i) out << "  [" << i << "] " << files[i] << (i == 0 ? "  (reference)" : "") << "\n";
  std::snprintf(cell, sizeof cell, "  %-36s", "figure");
  out << cell;
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::snprintf(cell, sizeof cell, i == 0 ? " %14s" : " %14s %8s", ("[" + std::to_string(i) + "]").c_str(), "ratio");
    out << cell;
  }
  out << "\n";
  for (const CompareFigure& f : figures) {
    std::snprintf(cell, sizeof cell, "  %-36s", f.name.c_str());
    out << cell;
    for (std::size_t i = 0; i < f.values.size(); ++i) {
      const double v = f.values[i];
      if (std::isnan(v)) {
        std::snprintf(cell, sizeof cell, " %14s", "-");
      } else {
        std::snprintf(cell, sizeof cell, " %14.6g", v);
      }
      out << cell;
      if (i > 0) {
        const double ref = f.values[0];
        if (std::isnan(v) || std::isnan(ref) || ref == 0) {
          std::snprintf(cell, sizeof cell, " %8s", "-");
        } else {
          std::snprintf(cell, sizeof cell, " %7.3fx", v / ref);
        }
        out << cell;
      }
    }
    out << "\n";
  }
}

std::string comparison_json(const std::vector<std::string>& files, const std::vector<CompareFigure>& figures) {
  JsonWriter j;
  j.begin_object();
  j.key("files").begin_array();
  for (const std::string& f : files) j.value(f);
  j.end_array();
  j.key("figures").begin_array();
  for (const CompareFigure& f : figures) {
    j.begin_object();
    j.key("name").value(f.name);
    j.key("values").begin_array();
    for (double v : f.values) {
      if (std::isnan(v)) {
        j.null();
      } else {
        j.value(v);
      }
    }
    j.end_array();
    j.key("ratios_to_first").begin_array();
    for (double v : f.values) {
      if (std::isnan(v) || std::isnan(f.values[0]) || f.values[0] == 0) {
        j.null();
      } else {
        j.value(v / f.values[0]);
      }
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.str();
}

}  // namespace fabricsim
