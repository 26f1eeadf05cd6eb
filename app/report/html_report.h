#pragma once
// `fabricsim report DIR`: one self-contained HTML file for a run folder (results.json), a
// sweep folder (sweep.json) or a what-if folder (whatif.json): the facts, the tables and
// the charts as inline SVG, and links to any timeline for Perfetto. No scripts and
// nothing fetched, so it can be mailed.
#include <string>

namespace fabricsim {

// std::runtime_error naming the folder when it holds none of the three.
std::string html_report(const std::string& dir);

}  // namespace fabricsim
