#include "app/studies/compare.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <stdexcept>

#include "app/config/yaml_safety.h"
#include "app/output/json_writer.h"
#include "app/output/result_keys.h"
#include "app/output/result_number.h"
#include "sim/core/units.h"

namespace fabricsim {

namespace {

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

void add_collective_rows(std::vector<std::pair<std::string, double>>& f, const YAML::Node& rows) {
  if (!rows || !rows.IsSequence() || rows.size() == 0) return;
  const YAML::Node last = rows[rows.size() - 1];
  f.emplace_back("collective_time_us (largest size)", result_number(last[result_key::kTimeUs]));
  f.emplace_back("busbw_GBps (largest size)", result_number(last[result_key::kBusbwGBps]));
  // Every size, as nccl-tests users read a sweep: small sizes are latency, large ones bandwidth.
  for (const YAML::Node& row : rows) {
    const double size = result_number(row[result_key::kSizeBytes]);
    if (std::isnan(size)) continue;
    const std::string at = " @ " + format_bytes(static_cast<std::int64_t>(size));
    f.emplace_back("time_us" + at, result_number(row[result_key::kTimeUs]));
    f.emplace_back("busbw_GBps" + at, result_number(row[result_key::kBusbwGBps]));
  }
}

// The figures an architect compares, from one results.json (JSON is YAML). The second
// of each pair says whether it is a headline figure (the endpoint counters are not).
std::vector<std::pair<std::string, double>> figures_of(const YAML::Node& r, std::size_t& headline) {
  std::vector<std::pair<std::string, double>> f;
  f.emplace_back("complete", r[result_key::kComplete] && r[result_key::kComplete].as<bool>() ? 1.0 : 0.0);
  f.emplace_back("sim_time_us", result_number(r[result_key::kSimTimePs]) * 1e-6);
  if (const YAML::Node c = r[result_key::kCollective]) add_collective_rows(f, c[result_key::kRows]);
  if (const YAML::Node t = r[result_key::kTraining]) {
    f.emplace_back("iteration_time_us", result_number(t[result_key::kIterationTimeUs]));
    f.emplace_back("exposed_communication_fraction", result_number(t[result_key::kExposedCommunicationFraction]));
  }
  if (const YAML::Node w = r[result_key::kWorkload]) {
    f.emplace_back("fct_p50_us", result_number(w[result_key::kFctUs][result_key::kP50]));
    f.emplace_back("fct_p99_us", result_number(w[result_key::kFctUs][result_key::kP99]));
    f.emplace_back("slowdown_p50", result_number(w[result_key::kSlowdown][result_key::kP50]));
    f.emplace_back("slowdown_p99", result_number(w[result_key::kSlowdown][result_key::kP99]));
  }
  double drops = 0, pauses = 0, busiest = 0;
  for (const YAML::Node& l : r[result_key::kLinks]) {
    if (l[result_key::kDrops]) drops += result_number(l[result_key::kDrops]);
    if (l[result_key::kPausesSent]) pauses += result_number(l[result_key::kPausesSent]);
    busiest = std::max(busiest, result_number(l[result_key::kUtilization]));
  }
  f.emplace_back("max_link_utilization", busiest);
  f.emplace_back("drops", drops);
  f.emplace_back("pfc_pauses", pauses);
  f.emplace_back("wall_seconds", result_number(r[result_key::kWallSeconds]));
  headline = f.size();
  // Every endpoint counter the run wrote (the NIC declares them; nothing here names them).
  for (const auto& counter : r[result_key::kEndpoints]) f.emplace_back(counter.first.as<std::string>(), result_number(counter.second));
  return f;
}

std::string text_of(const YAML::Node& n, const char* fallback) {
  return n && n.IsScalar() ? n.Scalar() : std::string(fallback);
}

}  // namespace

Comparison compare_results(const std::vector<std::string>& files) {
  Comparison out;
  for (std::size_t i = 0; i < files.size(); ++i) {
    YAML::Node r;
    try {
      r = YAML::LoadFile(files[i]);
      check_yaml_structure(r, files[i]);
    } catch (const YAML::Exception& e) {
      throw std::runtime_error(files[i] + ": cannot read it as results.json: " + e.msg);
    }
    ComparedRun run;
    run.file = files[i];
    std::vector<std::pair<std::string, double>> figures;
    std::size_t headline = 0;
    if (r.IsSequence() && r.size() > 0 && r[0].IsMap() && r[0][result_key::kSizeBytes]) {
      // `fabricsim collective --json`: its rows alone.
      run.config_name = run.fidelity = "-";
      add_collective_rows(figures, r);
      headline = figures.size();
    } else if (r.IsMap() && r[result_key::kSimTimePs]) {
      run.config_name = text_of(r["config_name"], "-");
      run.fidelity = text_of(r["fidelity"], "-");
      run.config_hash = text_of(r["config_hash"], "");
      if (r["seed"] && r["seed"].IsScalar()) run.seed = r["seed"].as<std::int64_t>(-1);
      for (const YAML::Node& o : r["config_overrides"]) run.overrides.push_back(text_of(o, ""));
      figures = figures_of(r, headline);
    } else {
      throw std::runtime_error(files[i] + ": expected a fabricsim results.json (from run, or collective --out DIR) or the rows "
                               "of `fabricsim collective --json`");
    }
    for (std::size_t k = 0; k < figures.size(); ++k) {
      const auto& [name, value] = figures[k];
      auto it = std::find_if(out.figures.begin(), out.figures.end(), [&](const CompareFigure& f) { return f.name == name; });
      if (it == out.figures.end()) {
        out.figures.push_back({name, std::vector<double>(files.size(), kNone), k < headline});
        it = out.figures.end() - 1;
      }
      it->values[i] = value;
    }
    out.runs.push_back(std::move(run));
  }
  // Each column's label: the config's name; where names repeat, the run's folder (a
  // sweep names its folders by their values), then its position.
  const auto repeated = [&](const std::string& label, std::size_t i) {
    for (std::size_t k = 0; k < out.runs.size(); ++k) {
      if (k != i && out.runs[k].label == label) return true;
    }
    return false;
  };
  for (ComparedRun& run : out.runs) run.label = run.config_name == "-" ? std::filesystem::path(run.file).stem().string() : run.config_name;
  const auto relabel = [&](const std::function<std::string(std::size_t)>& label) {
    std::vector<bool> clash(out.runs.size());
    for (std::size_t i = 0; i < out.runs.size(); ++i) clash[i] = repeated(out.runs[i].label, i);
    for (std::size_t i = 0; i < out.runs.size(); ++i) {
      if (clash[i] && !label(i).empty()) out.runs[i].label = label(i);
    }
  };
  relabel([&](std::size_t i) { return std::filesystem::path(out.runs[i].file).parent_path().filename().string(); });
  relabel([&](std::size_t i) { return out.runs[i].label + "#" + std::to_string(i + 1); });
  return out;
}

void print_comparison(std::ostream& out, const Comparison& c) {
  // Overrides every run shares are said once; each run lists the ones that set it apart.
  const auto everyone_has = [&](const std::string& o) {
    return std::all_of(c.runs.begin(), c.runs.end(), [&](const ComparedRun& r) {
      return std::find(r.overrides.begin(), r.overrides.end(), o) != r.overrides.end();
    });
  };
  std::vector<std::string> shared;
  if (c.runs.size() > 1) {
    for (const std::string& o : c.runs[0].overrides) {
      if (everyone_has(o)) shared.push_back(o);
    }
  }
  const auto list = [&](const std::vector<std::string>& items) {
    std::string text;
    for (const std::string& o : items) text += (text.empty() ? "" : ", ") + o;
    return text.empty() ? std::string("none") : text;
  };
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    const ComparedRun& r = c.runs[i];
    out << "  " << r.label << (i == 0 ? "  (reference)" : "") << "\n    file      " << r.file << "\n    config    "
        << r.config_name << "   fidelity " << r.fidelity;
    if (r.seed >= 0) out << "   seed " << r.seed;
    std::vector<std::string> own;
    for (const std::string& o : r.overrides) {
      if (std::find(shared.begin(), shared.end(), o) == shared.end()) own.push_back(o);
    }
    out << "\n    overrides " << list(own) << "\n";
  }
  if (!shared.empty()) out << "  overrides of every run: " << list(shared) << "\n";
  std::size_t name_width = 6;
  for (const CompareFigure& f : c.figures) name_width = std::max(name_width, f.name.size());
  std::vector<std::size_t> width;
  for (const ComparedRun& r : c.runs) width.push_back(std::max<std::size_t>(12, r.label.size()));
  const auto pad = [](const std::string& s, std::size_t w) { return std::string(w > s.size() ? w - s.size() : 0, ' ') + s; };
  out << "\n  " << std::string("figure") << std::string(name_width - 6, ' ');
  for (std::size_t i = 0; i < c.runs.size(); ++i) out << "  " << pad(c.runs[i].label, width[i]) << (i ? "     ratio" : "");
  out << "\n";
  char cell[64];
  for (const CompareFigure& f : c.figures) {
    out << "  " << f.name << std::string(name_width - f.name.size(), ' ');
    for (std::size_t i = 0; i < f.values.size(); ++i) {
      const double v = f.values[i];
      if (std::isnan(v)) {
        out << "  " << pad("-", width[i]);
      } else {
        std::snprintf(cell, sizeof cell, "%.6g", v);
        out << "  " << pad(cell, width[i]);
      }
      if (i > 0) {
        const double ref = f.values[0];
        if (std::isnan(v) || std::isnan(ref) || ref == 0) {
          out << pad("-", 10);
        } else {
          std::snprintf(cell, sizeof cell, "%.3fx", v / ref);
          out << pad(cell, 10);
        }
      }
    }
    out << "\n";
  }
}

std::string comparison_json(const Comparison& c) {
  JsonWriter j;
  j.begin_object();
  j.key("files").begin_array();
  for (const ComparedRun& r : c.runs) j.value(r.file);
  j.end_array();
  j.key("runs").begin_array();
  for (const ComparedRun& r : c.runs) {
    j.begin_object();
    j.key("file").value(r.file);
    j.key("label").value(r.label);
    j.key("config_name").value(r.config_name);
    j.key("fidelity").value(r.fidelity);
    j.key("config_hash").value(r.config_hash);
    j.key("seed").value(r.seed);
    j.key("overrides").begin_array();
    for (const std::string& o : r.overrides) j.value(o);
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.key("figures").begin_array();
  for (const CompareFigure& f : c.figures) {
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
