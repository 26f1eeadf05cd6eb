#pragma once
// Charts as inline SVG for the HTML report: no scripts, no fonts to fetch, so the file
// opens anywhere and can be mailed. Each returns one <svg> element.
#include <string>
#include <vector>

namespace fabricsim {

// Text made safe inside XML and HTML.
std::string escape_xml(const std::string& text);

struct ChartSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

// Lines with markers; x on a log-2 axis labelled as sizes ("1 MiB") when `sizes_on_x`.
std::string svg_line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<ChartSeries>& series, bool sizes_on_x);

// Grouped bars: one group per category, one bar per series, a note (e.g. "n=12") above
// each group; a log y axis when `log_y`.
std::string svg_bar_chart(const std::string& title, const std::string& y_label, const std::vector<std::string>& categories,
                          const std::vector<ChartSeries>& series, const std::vector<std::string>& notes, bool log_y);

// Stacked bars, one per entry of `bars` (each a value per segment), with a dashed
// reference line (e.g. the iteration time) drawn above them and labelled.
std::string svg_stacked_bars(const std::string& title, const std::string& y_label, const std::vector<std::string>& segments,
                             const std::vector<std::vector<double>>& bars, double reference, const std::string& reference_label);

// Rows of cells coloured 0..1 (utilisation); a NaN cell is no link and is drawn hatched
// grey, labelled in the legend, so it never reads as data.
std::string svg_heat_rows(const std::string& title, const std::vector<std::pair<std::string, std::vector<double>>>& rows);

}  // namespace fabricsim
