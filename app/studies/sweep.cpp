#include "app/studies/sweep.h"

#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "app/config/yaml_safety.h"
#include "app/studies/compare.h"
#include "app/config/config_error.h"
#include "app/output/json_writer.h"
#include "app/output/results.h"
#include "app/config/yaml_reader.h"
#include "app/scenario/setup_threads.h"

namespace fabricsim {

namespace {

std::string scalar_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

// results.json's config_hash, read from its head (the key comes before the big lists).
std::string stored_config_hash(const std::string& results) {
  std::ifstream in(results, std::ios::binary);
  std::string head(16384, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const std::string key = "\"config_hash\": \"";
  const std::size_t at = head.find(key);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + key.size(), end = head.find('"', begin);
  return end == std::string::npos ? "" : head.substr(begin, end - begin);
}

// The table a terminal shows at the end: a row per variant, its exit code and the
// headline figures any variant has (the per-size and endpoint ones are in sweep.csv).
std::string figure_table(const std::vector<SweepVariant>& variants, const std::vector<int>& exit_codes,
                         const std::vector<std::size_t>& present, const std::vector<CompareFigure>& figures) {
  std::vector<const CompareFigure*> shown;
  for (const CompareFigure& f : figures) {
    if (f.headline && f.name.find(" @ ") == std::string::npos && f.name != "wall_seconds") shown.push_back(&f);
  }
  std::size_t name_width = 7;
  for (const SweepVariant& v : variants) name_width = std::max(name_width, v.name.size());
  std::ostringstream out;
  const auto pad = [](const std::string& s, std::size_t w) { return std::string(w > s.size() ? w - s.size() : 0, ' ') + s; };
  out << "  variant" << std::string(name_width - 7, ' ') << "  exit";
  for (const CompareFigure* f : shown) out << "  " << pad(f->name, 12);
  out << "\n";
  char cell[64];
  for (std::size_t i = 0; i < variants.size(); ++i) {
    out << "  " << variants[i].name << std::string(name_width - variants[i].name.size(), ' ') << "  " << pad(std::to_string(exit_codes[i]), 4);
    const auto row = std::find(present.begin(), present.end(), i);
    for (const CompareFigure* f : shown) {
      const double v = row == present.end() ? std::nan("") : f->values[static_cast<std::size_t>(row - present.begin())];
      if (std::isnan(v)) {
        std::snprintf(cell, sizeof cell, "-");
      } else {
        std::snprintf(cell, sizeof cell, "%.6g", v);
      }
      out << "  " << pad(cell, std::max<std::size_t>(12, f->name.size()));
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace

SweepSpec load_sweep_spec(const std::string& path) {
  const YAML::Node root = read_yaml_file(path);
  YamlContext ctx(path);
  MapReader top(ctx, root, "");
  SweepSpec s;
  s.file = path;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  const auto resolve = [&](const std::string& f) {
    const std::filesystem::path p(f);
    return p.is_relative() ? (dir / p).lexically_normal().string() : f;
  };
  if (top.has("config")) s.configs.push_back(resolve(top.string("config")));
  for (const std::string& c : top.string_list("configs", false)) s.configs.push_back(resolve(c));
  if (s.configs.empty()) ctx.fail(root, "config", "expected `config: FILE` or `configs: [FILE, ...]`");
  for (const std::string& c : s.configs) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(c, ec)) ctx.fail(root, "configs", "cannot read '" + c + "'");
  }
  const YAML::Node grid = root["grid"];
  top.map("grid", false);
  if (grid && !grid.IsMap()) ctx.fail(grid, "grid", "expected a map of config keys to lists of values");
  if (grid) {
    for (const auto& item : grid) {
      const std::string key = item.first.Scalar();
      if (!item.second.IsSequence() || item.second.size() == 0) ctx.fail(item.second, "grid." + key, "expected a list of values");
      std::vector<std::string> values;
      for (const auto& v : item.second) values.push_back(scalar_text(v));
      s.grid.emplace_back(key, std::move(values));
    }
  }
  s.sets = top.string_list("set", false);
  top.finish();
  return s;
}

std::vector<SweepVariant> sweep_variants(const SweepSpec& spec) {
  std::vector<SweepVariant> out;
  for (const std::string& config : spec.configs) {
    // The grid's product, the last key varying fastest.
    std::vector<std::size_t> at(spec.grid.size(), 0);
    for (bool more = true; more;) {
      SweepVariant v;
      v.config = config;
      if (spec.configs.size() > 1) {
        v.values.emplace_back("config", std::filesystem::path(config).stem().string());
      }
      for (std::size_t k = 0; k < spec.grid.size(); ++k) v.values.emplace_back(spec.grid[k].first, spec.grid[k].second[at[k]]);
      for (const auto& [key, value] : v.values) {
        const std::string last = key.substr(key.find_last_of('.') + 1);
        v.name += (v.name.empty() ? "" : "__") + folder_name(last) + "=" + folder_name(value);
      }
      if (v.name.empty()) v.name = "base";
      out.push_back(std::move(v));
      more = false;
      for (std::size_t k = spec.grid.size(); k-- > 0;) {
        if (++at[k] < spec.grid[k].second.size()) {
          more = true;
          break;
        }
        at[k] = 0;
      }
    }
  }
  return out;
}

SweepOutcome run_sweep(const SweepSpec& spec, const std::vector<SweepVariant>& variants, const std::string& fabricsim,
                       const std::string& out_dir, int jobs,
                       const std::function<void(const SweepVariant&, std::size_t, std::size_t, int)>& progress) {
  namespace fs = std::filesystem;
  fs::create_directories(out_dir);
  SweepOutcome outcome;
  std::map<pid_t, std::size_t> running;
  std::vector<int> exit_codes(variants.size(), 0);
  std::size_t next = 0, done = 0;
  // Runs at once share the machine's cores: each may take its share unasked (a large run
  // splits itself over them), the same results on any number.
  const std::string cores_each = std::to_string(std::max(1u, usable_cores() / static_cast<unsigned>(std::max(1, jobs))));
  const auto results_of = [&](std::size_t i) { return (fs::path(out_dir) / variants[i].name / "results.json").string(); };
  const auto finish = [&](std::size_t i, int code) {
    exit_codes[i] = code;
    ++done;
    if (progress) progress(variants[i], done, variants.size(), code);
  };
  while (next < variants.size() || !running.empty()) {
    while (next < variants.size() && static_cast<int>(running.size()) < jobs) {
      const std::size_t i = next++;
      if (fs::exists(results_of(i))) {
        if (variants[i].config_hash.empty() || stored_config_hash(results_of(i)) == variants[i].config_hash) {
          ++outcome.reused;  // finished before from the same config: resumed, not rerun
          finish(i, 0);
          continue;
        }
        // From another config (the spec or the config file changed since): its figures
        // would be stale, so they go before it runs again.
        ++outcome.stale;
        fs::remove(results_of(i));
      }
      std::vector<std::string> args{fabricsim, "run", variants[i].config, "--out", (fs::path(out_dir) / variants[i].name).string()};
      for (const std::string& s : spec.sets) args.insert(args.end(), {"--set", s});
      for (const auto& [key, value] : variants[i].values) {
        if (key != "config") args.insert(args.end(), {"--set", key + "=" + value});
      }
      const std::string log = (fs::path(out_dir) / (variants[i].name + ".log")).string();
      const pid_t pid = ::fork();
      if (pid == 0) {
        // The child: its output to the variant's log, then the run.
        const std::FILE* f = std::freopen(log.c_str(), "w", stdout);
        if (f != nullptr) ::dup2(::fileno(stdout), STDERR_FILENO);
        if (jobs > 1) ::setenv("FABRICSIM_CORES", cores_each.c_str(), 1);
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(fabricsim.c_str(), argv.data());
        ::_exit(127);
      }
      if (pid < 0) throw std::runtime_error("cannot start a run (fork failed)");
      running[pid] = i;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) break;
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    // A run that stopped early still wrote its results (exit 3 or 4); others did not.
    if (code == 0 || code == 3 || code == 4) {
      ++outcome.ran;
    } else {
      ++outcome.failed;
    }
    finish(it->second, code);
    running.erase(it);
  }
  // The summary: a row per variant, its values then its key figures (compare's).
  std::vector<std::string> files;
  std::vector<std::size_t> present;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    if (fs::exists(results_of(i))) {
      files.push_back(results_of(i));
      present.push_back(i);
    }
  }
  std::vector<CompareFigure> figures;
  if (!files.empty()) figures = compare_results(files).figures;
  std::ostringstream csv;
  csv << "variant";
  std::vector<std::string> keys;
  if (!variants.empty()) {
    for (const auto& kv : variants.front().values) keys.push_back(kv.first);
  }
  for (const std::string& k : keys) csv << "," << k;
  csv << ",exit_code";
  for (const CompareFigure& f : figures) csv << "," << f.name;
  csv << "\n";
  JsonWriter j;
  j.begin_object();
  j.key("spec").value(spec.file);
  j.key("variants").begin_array();
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const SweepVariant& v = variants[i];
    csv << v.name;
    j.begin_object();
    j.key("name").value(v.name);
    j.key("results").value(results_of(i));
    j.key("values").begin_object();
    for (const auto& [key, value] : v.values) {
      csv << "," << value;
      j.key(key).value(value);
    }
    j.end_object();
    csv << "," << exit_codes[i];
    j.key("exit_code").value(exit_codes[i]);
    const auto row = std::find(present.begin(), present.end(), i);
    j.key("figures").begin_object();
    for (const CompareFigure& f : figures) {
      const double value = row == present.end() ? std::nan("") : f.values[static_cast<std::size_t>(row - present.begin())];
      csv << ",";
      if (!std::isnan(value)) csv << value;
      if (std::isnan(value)) {
        j.key(f.name).null();
      } else {
        j.key(f.name).value(value);
      }
    }
    j.end_object();
    j.end_object();
    csv << "\n";
  }
  j.end_array();
  j.end_object();
  write_file_atomically((fs::path(out_dir) / "sweep.csv").string(), csv.str());
  write_file_atomically((fs::path(out_dir) / "sweep.json").string(), j.str());
  outcome.table = figure_table(variants, exit_codes, present, figures);
  return outcome;
}

}  // namespace fabricsim
