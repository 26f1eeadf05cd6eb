#include "app/studies/sweep.h"

#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
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

namespace fabricsim {

namespace {

std::string scalar_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
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

SweepOutcome run_sweep(const SweepSpec& spec, const std::string& fabricsim, const std::string& out_dir, int jobs,
                       const std::function<void(const SweepVariant&, std::size_t, std::size_t, int)>& progress) {
  namespace fs = std::filesystem;
  const std::vector<SweepVariant> variants = sweep_variants(spec);
  fs::create_directories(out_dir);
  SweepOutcome outcome;
  std::map<pid_t, std::size_t> running;
  std::vector<int> exit_codes(variants.size(), 0);
  std::size_t next = 0, done = 0;
  const auto results_of = [&](std::size_t i) { return (fs::path(out_dir) / variants[i].name / "results.json").string(); };
  const auto finish = [&](std::size_t i, int code) {
    exit_codes[i] = code;
    ++done;
    if (progress) progress(variants[i], done, variants.size(), code);
  };
  while (next < variants.size() || !running.empty()) {
    while (next < variants.size() && static_cast<int>(running.size()) < jobs) {
      const std::size_t i = next++;
      if (fs::exists(results_of(i))) {  // finished before: resumed, not rerun
        ++outcome.reused;
        finish(i, 0);
        continue;
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
  if (!files.empty()) figures = compare_results(files);
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
  return outcome;
}

}  // namespace fabricsim
