#pragma once
// Suggestions for a misspelt name: an option, or a file beside the one asked for.
#include <cstddef>
#include <string>
#include <vector>

namespace fabricsim {

// Levenshtein distance: letters inserted, deleted or changed to make `a` into `b`.
std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidate nearest to `word` by edit distance, if it is near enough to be the one
// meant (at most a third of the word's letters changed, or `word` is its prefix); "".
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates);

// For a file that cannot be read: "; did you mean 'NAME'?" naming a file in its folder
// whose name is close (dumbbell.yml for dumbbell.yaml), or "".
std::string file_suggestion(const std::string& path);

}  // namespace fabricsim
