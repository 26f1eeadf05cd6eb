#include "app/config/did_you_mean.h"

#include <algorithm>
#include <filesystem>

namespace fabricsim {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string closest_name(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = word.size() / 3 + 1;
  for (const std::string& c : candidates) {
    if (c == word) continue;
    const std::size_t d = (word.size() >= 3 && c.rfind(word, 0) == 0) || (c.size() >= 3 && word.rfind(c, 0) == 0)
                              ? 0
                              : edit_distance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::string file_suggestion(const std::string& path) {
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  std::vector<std::string> names;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());  // the same answer whatever the directory's order
  const std::string near = closest_name(p.filename().string(), names);
  if (near.empty()) return "";
  return "; did you mean '" + (p.has_parent_path() ? (dir / near).string() : near) + "'?";
}

}  // namespace fabricsim
