#include "app/report/html_report.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "app/config/yaml_safety.h"
#include "app/output/result_keys.h"
#include "app/output/result_number.h"
#include "app/report/svg_chart.h"
#include "app/studies/compare.h"
#include "sim/core/units.h"

namespace fabricsim {

namespace {

namespace fs = std::filesystem;

constexpr const char* kStyle =
    "body{font-family:sans-serif;max-width:1100px;margin:24px auto;color:#222;padding:0 12px}"
    "h1{font-size:22px}h2{font-size:17px;border-bottom:1px solid #ccc;padding-bottom:3px;margin-top:28px}"
    "table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}"
    "th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}.warn{color:#b00020;font-weight:bold}"
    ".note{color:#555;font-size:13px}svg{display:block;margin:10px 0;max-width:100%;height:auto}";

YAML::Node load_json(const std::string& path) {
  try {
    YAML::Node n = YAML::LoadFile(path);
    check_yaml_structure(n, path);
    return n;
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": cannot read it: " + e.msg);
  }
}

std::string text(const YAML::Node& n, const std::string& fallback = "-") {
  return n && n.IsScalar() ? n.Scalar() : fallback;
}

std::string shown(double v) {
  if (std::isnan(v)) return "-";
  char t[32];
  std::snprintf(t, sizeof t, "%.6g", v);
  return t;
}

std::string e(const std::string& s) { return escape_xml(s); }

// A table from rows of cells; the first row is the header.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::ostringstream out;
  out << "<table>";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out << "<tr>";
    for (const std::string& c : rows[r]) out << (r == 0 ? "<th>" : "<td>") << e(c) << (r == 0 ? "</th>" : "</td>");
    out << "</tr>";
  }
  out << "</table>";
  return out.str();
}

// The timelines in the folder, for Perfetto (ui.perfetto.dev opens a dropped file).
std::string timelines(const std::string& dir) {
  std::ostringstream out;
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    std::string head(256, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    if (head.find("traceEvents") != std::string::npos) found.push_back(entry.path().filename().string());
  }
  std::sort(found.begin(), found.end());
  if (found.empty()) return "";
  out << "<h2>Timeline</h2><p>";
  for (const std::string& f : found) out << "<a href=\"" << e(f) << "\">" << e(f) << "</a> ";
  out << "</p><p class=\"note\">Open it in Perfetto: go to https://ui.perfetto.dev and drop the file on the page (or "
         "chrome://tracing). It stays on your machine.</p>";
  return out.str();
}

// A link's tier: its ends' names with the digits dropped (pod3.edge1 -> pod.edge).
std::string tier_of(const std::string& from, const std::string& to) {
  static const std::regex digits("[0-9]+");
  return std::regex_replace(from, digits, "") + " -> " + std::regex_replace(to, digits, "");
}

std::string run_sections(const std::string& dir, const YAML::Node& r) {
  std::ostringstream out;
  const std::string file = (fs::path(dir) / "results.json").string();
  std::string overrides;
  for (const YAML::Node& o : r["config_overrides"]) overrides += (overrides.empty() ? "" : ", ") + text(o);
  const bool complete = r[result_key::kComplete] && r[result_key::kComplete].as<bool>();
  out << "<h1>fabricsim report: " << e(text(r["config_name"])) << "</h1>";
  if (!complete) out << "<p class=\"warn\">INCOMPLETE: " << e(text(r["stop_reason"])) << "</p>";
  out << table({{"fact", "value"},
                {"config file", text(r["config_file"])},
                {"config hash", text(r["config_hash"])},
                {"overrides", overrides.empty() ? "none" : overrides},
                {"fidelity", text(r["fidelity"])},
                {"seed", text(r["seed"])},
                {"fabricsim", text(r["fabricsim_version"])},
                {"complete", complete ? "yes" : "no"},
                {"stop reason", text(r["stop_reason"])},
                {"simulated time", format_time(static_cast<Time>(result_number(r[result_key::kSimTimePs])))},
                {"events", text(r["events"])},
                {"wall time (s)", text(r[result_key::kWallSeconds])},
                {"endpoints, switches", text(r["hosts"]) + ", " + text(r["switches"])},
                {"messages finished", text(r["messages_finished"]) + " of " + text(r["messages_total"])}});
  if (const YAML::Node stuck = r["no_progress"]) {
    out << "<h2>No progress</h2><p class=\"warn\">" << e(text(stuck["reason"])) << "</p><ul>";
    for (const YAML::Node& s : stuck["spinning"]) out << "<li>" << e(text(s)) << "</li>";
    out << "</ul><p>" << e(text(stuck["messages_left"])) << " started messages unfinished</p>";
  }
  if (r["deadlock"] && r["deadlock"].as<bool>(false)) {
    out << "<h2>Deadlock</h2><p class=\"warn\">PFC deadlock; the cycle:";
    for (const YAML::Node& hop : r["deadlock_cycle"]) out << " " << e(text(hop));
    out << "</p>";
  }
  // The key figures, as compare reads them.
  const Comparison c = compare_results({file});
  std::vector<std::vector<std::string>> figures{{"figure", "value"}};
  for (const CompareFigure& f : c.figures) {
    if (f.headline && f.name.find(" @ ") == std::string::npos) figures.push_back({f.name, shown(f.values[0])});
  }
  out << "<h2>Key figures</h2>" << table(figures);

  if (const YAML::Node coll = r[result_key::kCollective]) {
    out << "<h2>Collective: " << e(text(coll["op"])) << " over " << e(text(coll["ranks"])) << " ranks</h2><p class=\"note\">model: "
        << e(text(coll["model"])) << "</p>";
    for (const YAML::Node& gap : coll["validation_gaps"]) out << "<p class=\"note\">outside the validated corpus: " << e(text(gap)) << "</p>";
    std::vector<std::vector<std::string>> rows{{"size", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "algorithm", "protocol", "NCCL model (us)", "error band", "data"}};
    ChartSeries busbw{"busbw", {}}, low{"measured busbw, low end of the error band", {}}, high{"measured busbw, high end", {}};
    for (const YAML::Node& row : coll[result_key::kRows]) {
      const double size = result_number(row[result_key::kSizeBytes]);
      std::string band = "-";
      if (const YAML::Node b = row["error_band"]; b && b.IsMap()) {
        char t[48];
        std::snprintf(t, sizeof t, "%+.0f%% .. %+.0f%%", result_number(b["low"]) * 100, result_number(b["high"]) * 100);
        band = t;
        low.points.emplace_back(size, result_number(b["busbw_low_GBps"]));
        high.points.emplace_back(size, result_number(b["busbw_high_GBps"]));
      }
      rows.push_back({format_bytes(static_cast<std::int64_t>(size)), shown(result_number(row[result_key::kTimeUs])),
                      shown(result_number(row[result_key::kAlgbwGBps])), shown(result_number(row[result_key::kBusbwGBps])), text(row["nccl_algo"]),
                      text(row["nccl_proto"]), shown(result_number(row["nccl_model_us"])), band, text(row["data_check"])});
      if (!std::isnan(result_number(row[result_key::kTimeUs]))) busbw.points.emplace_back(size, result_number(row[result_key::kBusbwGBps]));
    }
    std::vector<ChartSeries> lines{busbw};
    if (!low.points.empty()) lines.insert(lines.end(), {low, high});
    if (busbw.points.size() > 1) out << svg_line_chart("busbw by size", "size", "busbw (GB/s)", lines, true);
    out << table(rows);
  }

  if (const YAML::Node w = r[result_key::kWorkload]; w && w["by_size"]) {
    std::vector<std::string> categories, notes;
    ChartSeries p50{"slowdown p50", {}}, p99{"slowdown p99", {}};
    std::vector<std::vector<std::string>> rows{{"flow size up to", "flows", "finished", "FCT p50 (us)", "FCT p99 (us)", "slowdown p50", "slowdown p99"}};
    for (const YAML::Node& b : w["by_size"]) {
      const std::string bucket = b["max_bytes"] && !b["max_bytes"].IsNull() ? format_bytes(static_cast<std::int64_t>(result_number(b["max_bytes"]))) : "larger";
      rows.push_back({bucket, text(b["flows"]), text(b["finished"]), shown(result_number(b["fct_us"]["p50"])), shown(result_number(b["fct_us"]["p99"])),
                      shown(result_number(b[result_key::kSlowdown]["p50"])), shown(result_number(b[result_key::kSlowdown]["p99"]))});
      if (result_number(b["finished"]) <= 0) continue;
      categories.push_back(bucket);
      notes.push_back("n=" + text(b["finished"]));
      p50.points.emplace_back(static_cast<double>(categories.size()), result_number(b[result_key::kSlowdown]["p50"]));
      p99.points.emplace_back(static_cast<double>(categories.size()), result_number(b[result_key::kSlowdown]["p99"]));
    }
    out << "<h2>Flows by size</h2>";
    if (!categories.empty()) out << svg_bar_chart("FCT slowdown by flow size (n: flows finished)", "slowdown (FCT / FCT alone)", categories, {p50, p99}, notes, true);
    out << table(rows);
  }

  if (const YAML::Node t = r[result_key::kTraining]) {
    out << "<h2>Training step</h2>";
    out << table({{"figure", "value"},
                  {"iteration (us)", shown(result_number(t[result_key::kIterationTimeUs]))},
                  {"mean compute (us)", shown(result_number(t["mean_compute_us"]))},
                  {"mean communication (us)", shown(result_number(t["mean_communication_us"]))},
                  {"mean exposed communication (us)", shown(result_number(t["mean_exposed_communication_us"]))},
                  {"exposed communication fraction", shown(result_number(t[result_key::kExposedCommunicationFraction]))},
                  {"critical rank", text(t["critical_rank"])}});
    std::vector<std::vector<double>> bars;
    const double iteration = result_number(t[result_key::kIterationTimeUs]) / 1e3;
    for (const YAML::Node& p : t["per_rank"]) {
      const double compute = result_number(p["compute_us"]) / 1e3, exposed = result_number(p["exposed_us"]) / 1e3, finish = result_number(p["finish_us"]) / 1e3;
      bars.push_back({compute, exposed, std::max(0.0, finish - compute - exposed), std::max(0.0, iteration - finish)});
    }
    if (!bars.empty()) {
      char label[64];
      std::snprintf(label, sizeof label, "iteration %.3f ms", iteration);
      out << svg_stacked_bars("where each rank's step went", "time (ms)",
                              {"compute", "exposed communication", "waiting (neither)", "done before the step ends"}, bars, iteration, label);
    }
  }

  // Links: utilisation per tier, busiest first, and the busiest links by name.
  std::map<std::string, std::vector<double>> tiers;
  struct Busy {
    double utilization;
    std::vector<std::string> cells;
  };
  std::vector<Busy> busiest;
  for (const YAML::Node& l : r[result_key::kLinks]) {
    const double u = result_number(l[result_key::kUtilization]);
    tiers[tier_of(text(l["from"]), text(l["to"]))].push_back(u);
    busiest.push_back({u, {text(l["from"]) + " -> " + text(l["to"]), shown(u * 100), text(l["max_queue_bytes"]), text(l[result_key::kDrops]),
                           text(l[result_key::kPausesSent])}});
  }
  if (!tiers.empty()) {
    std::vector<std::pair<std::string, std::vector<double>>> rows;
    std::size_t widest = 0;
    for (auto& [tier, values] : tiers) {
      std::sort(values.begin(), values.end(), std::greater<>());
      widest = std::max(widest, values.size());
    }
    const std::size_t shown_cells = std::min<std::size_t>(widest, 256);
    for (auto& [tier, values] : tiers) {
      values.resize(shown_cells, std::nan(""));
      rows.emplace_back(tier, values);
    }
    std::partial_sort(busiest.begin(), busiest.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(10, busiest.size())), busiest.end(),
                      [](const Busy& a, const Busy& b) { return a.utilization > b.utilization; });
    busiest.resize(std::min<std::size_t>(10, busiest.size()));
    std::vector<std::vector<std::string>> top{{"busiest link directions", "utilization (%)", "max queue (B)", "drops", "PFC pauses sent"}};
    for (const Busy& b : busiest) top.push_back(b.cells);
    out << "<h2>Links</h2>" << svg_heat_rows("link utilisation by tier" + std::string(widest > shown_cells ? " (the 256 busiest of each)" : ""), rows)
        << table(top);
  }
  out << timelines(dir);
  return out.str();
}

std::string sweep_sections(const std::string& dir, const YAML::Node& s) {
  std::ostringstream out;
  out << "<h1>fabricsim sweep report: " << e(fs::path(text(s["spec"])).filename().string()) << "</h1>";
  std::vector<std::string> keys, figures;
  for (const YAML::Node& v : s["variants"]) {
    for (const auto& kv : v["values"]) {
      const std::string k = kv.first.as<std::string>();
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    for (const auto& kv : v["figures"]) {
      const std::string f = kv.first.as<std::string>();
      if (f.find(" @ ") == std::string::npos && std::find(figures.begin(), figures.end(), f) == figures.end() && figures.size() < 12) figures.push_back(f);
    }
  }
  std::vector<std::vector<std::string>> rows{{"variant"}};
  rows[0].insert(rows[0].end(), keys.begin(), keys.end());
  rows[0].push_back("exit");
  rows[0].insert(rows[0].end(), figures.begin(), figures.end());
  for (const YAML::Node& v : s["variants"]) {
    std::vector<std::string> row{text(v["name"])};
    for (const std::string& k : keys) row.push_back(text(v["values"][k]));
    row.push_back(text(v["exit_code"]));
    for (const std::string& f : figures) row.push_back(shown(result_number(v["figures"][f])));
    rows.push_back(row);
  }
  out << "<p>" << rows.size() - 1 << " variants, each in a folder of its own under " << e(dir) << ".</p>" << table(rows);
  return out.str();
}

std::string whatif_sections(const YAML::Node& w) {
  std::ostringstream out;
  out << "<h1>fabricsim what-if report: " << e(text(w["config_name"])) << "</h1><p>config " << e(text(w["config_file"])) << "</p>";
  std::vector<std::string> keys;
  for (const YAML::Node& sc : w["scenarios"]) {
    for (const auto& kv : sc) {
      const std::string k = kv.first.as<std::string>();
      if (kv.second.IsScalar() && std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
  }
  std::vector<std::vector<std::string>> rows{keys};
  std::ostringstream hot;
  for (const YAML::Node& sc : w["scenarios"]) {
    std::vector<std::string> row;
    for (const std::string& k : keys) row.push_back(text(sc[k]));
    rows.push_back(row);
    if (sc["hotter_links"] && sc["hotter_links"].size() > 0) {
      hot << "<h3>" << e(text(sc["name"])) << ": links busier than in the baseline</h3>";
      std::vector<std::vector<std::string>> links{{"link", "baseline utilization", "utilization"}};
      for (const YAML::Node& l : sc["hotter_links"]) {
        links.push_back({text(l["from"]) + " -> " + text(l["to"]), shown(result_number(l["baseline_utilization"])), shown(result_number(l["utilization"]))});
      }
      hot << table(links);
    }
  }
  out << "<h2>Scenarios</h2>" << table(rows) << hot.str();
  return out.str();
}

}  // namespace

std::string html_report(const std::string& dir) {
  std::string body, title;
  if (fs::is_regular_file(fs::path(dir) / "results.json")) {
    const YAML::Node r = load_json((fs::path(dir) / "results.json").string());
    if (!r.IsMap() || !r[result_key::kSimTimePs]) throw std::runtime_error(dir + "/results.json: expected a fabricsim results.json");
    title = text(r["config_name"]);
    body = run_sections(dir, r);
  } else if (fs::is_regular_file(fs::path(dir) / "sweep.json")) {
    const YAML::Node s = load_json((fs::path(dir) / "sweep.json").string());
    title = "sweep " + fs::path(text(s["spec"])).stem().string();
    body = sweep_sections(dir, s);
  } else if (fs::is_regular_file(fs::path(dir) / "whatif.json")) {
    const YAML::Node w = load_json((fs::path(dir) / "whatif.json").string());
    title = "what-if " + text(w["config_name"]);
    body = whatif_sections(w);
  } else {
    throw std::runtime_error(dir + ": expected a folder with results.json (a run), sweep.json (a sweep) or whatif.json (a what-if)");
  }
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fabricsim: " + e(title) + "</title><style>" + kStyle +
         "</style></head><body>\n" + body + "\n<p class=\"note\">Written by fabricsim report.</p></body></html>\n";
}

}  // namespace fabricsim
