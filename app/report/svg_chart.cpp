#include "app/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

#include "sim/core/units.h"

namespace fabricsim {

namespace {

// Colour-blind-safe (Okabe and Ito) for series and segments.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"};
constexpr int kWidth = 760, kHeight = 340;
constexpr int kLeft = 70, kRight = 190, kTop = 36, kBottom = 60;  // the plot area's margins (legend on the right)

const char* colour(std::size_t i) { return kPalette[i % (sizeof kPalette / sizeof kPalette[0])]; }

std::string number(double v) {
  char text[32];
  if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-2)) {
    std::snprintf(text, sizeof text, "%.2g", v);
  } else {
    std::snprintf(text, sizeof text, "%.4g", v);
  }
  return text;
}

// A "nice" step for about `ticks` divisions of [0, top].
double nice_step(double top, int ticks) {
  const double raw = top / ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

struct Frame {
  std::ostringstream svg;
  double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
};

void open(Frame& f, const std::string& title, const std::string& y_label) {
  f.svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << kWidth << " " << kHeight << "\" width=\"" << kWidth
        << "\" height=\"" << kHeight << "\" font-family=\"sans-serif\" font-size=\"11\">";
  f.svg << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>";
  f.svg << "<text x=\"" << kWidth / 2 << "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">"
        << escape_xml(title) << "</text>";
  f.svg << "<text transform=\"translate(16," << kTop + f.plot_h / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
        << escape_xml(y_label) << "</text>";
}

// The y axis from 0 (or a log range) with grid lines; returns the y of a value.
std::function<double(double)> y_axis(Frame& f, double low, double high, bool log_y) {
  std::function<double(double)> y;
  if (log_y) {
    const double lo = std::floor(std::log10(std::max(low, 1e-12))), hi = std::max(lo + 1, std::ceil(std::log10(std::max(high, 1e-12))));
    y = [=, &f](double v) { return kTop + f.plot_h * (1 - (std::log10(std::max(v, 1e-12)) - lo) / (hi - lo)); };
    for (double e = lo; e <= hi; e += 1) {
      const double at = y(std::pow(10.0, e));
      f.svg << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + f.plot_w << "\" y1=\"" << at << "\" y2=\"" << at
            << "\" stroke=\"#dddddd\"/><text x=\"" << kLeft - 6 << "\" y=\"" << at + 4 << "\" text-anchor=\"end\">"
            << number(std::pow(10.0, e)) << "</text>";
    }
  } else {
    const double top = high > 0 ? high * 1.08 : 1;
    const double step = nice_step(top, 5);
    const double axis_top = std::ceil(top / step) * step;
    y = [=, &f](double v) { return kTop + f.plot_h * (1 - v / axis_top); };
    for (double v = 0; v <= axis_top + step / 2; v += step) {
      f.svg << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + f.plot_w << "\" y1=\"" << y(v) << "\" y2=\"" << y(v)
            << "\" stroke=\"#dddddd\"/><text x=\"" << kLeft - 6 << "\" y=\"" << y(v) + 4 << "\" text-anchor=\"end\">" << number(v)
            << "</text>";
    }
  }
  f.svg << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << f.plot_w << "\" height=\"" << f.plot_h
        << "\" fill=\"none\" stroke=\"#888888\"/>";
  return y;
}

void legend(Frame& f, const std::vector<std::string>& labels, const std::vector<std::string>& styles) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const double at = kTop + 8 + 18.0 * static_cast<double>(i);
    f.svg << "<rect x=\"" << kWidth - kRight + 12 << "\" y=\"" << at - 8 << "\" width=\"14\" height=\"10\" " << styles[i]
          << "/><text x=\"" << kWidth - kRight + 32 << "\" y=\"" << at + 1 << "\">" << escape_xml(labels[i]) << "</text>";
  }
}

std::string close(Frame& f) {
  f.svg << "</svg>";
  return f.svg.str();
}

}  // namespace

std::string escape_xml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string svg_line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<ChartSeries>& series, bool sizes_on_x) {
  Frame f;
  open(f, title, y_label);
  double x_low = INFINITY, x_high = -INFINITY, y_high = 0;
  for (const ChartSeries& s : series) {
    for (const auto& [x, v] : s.points) {
      x_low = std::min(x_low, x);
      x_high = std::max(x_high, x);
      y_high = std::max(y_high, v);
    }
  }
  if (!std::isfinite(x_low)) x_low = x_high = 1;
  const auto y = y_axis(f, 0, y_high, false);
  const double lo = std::log2(std::max(x_low, 1e-12)), hi = std::max(lo + 1, std::log2(std::max(x_high, 1e-12)));
  const auto x = [&](double v) { return kLeft + f.plot_w * (std::log2(std::max(v, 1e-12)) - lo) / (hi - lo); };
  // Ticks at the points' own x values, thinned to at most ten.
  std::vector<double> ticks;
  for (const ChartSeries& s : series) {
    for (const auto& p : s.points) ticks.push_back(p.first);
  }
  std::sort(ticks.begin(), ticks.end());
  ticks.erase(std::unique(ticks.begin(), ticks.end()), ticks.end());
  const std::size_t every = std::max<std::size_t>(1, (ticks.size() + 9) / 10);
  for (std::size_t i = 0; i < ticks.size(); i += every) {
    const std::string label = sizes_on_x ? format_bytes(static_cast<std::int64_t>(ticks[i])) : number(ticks[i]);
    f.svg << "<text x=\"" << x(ticks[i]) << "\" y=\"" << kTop + f.plot_h + 16 << "\" text-anchor=\"middle\">" << escape_xml(label)
          << "</text>";
  }
  f.svg << "<text x=\"" << kLeft + f.plot_w / 2 << "\" y=\"" << kHeight - 14 << "\" text-anchor=\"middle\">" << escape_xml(x_label)
        << "</text>";
  std::vector<std::string> labels, styles;
  for (std::size_t i = 0; i < series.size(); ++i) {
    std::ostringstream path;
    for (std::size_t k = 0; k < series[i].points.size(); ++k) {
      path << (k ? " L" : "M") << x(series[i].points[k].first) << " " << y(series[i].points[k].second);
    }
    f.svg << "<path d=\"" << path.str() << "\" fill=\"none\" stroke=\"" << colour(i) << "\" stroke-width=\"2\"/>";
    for (const auto& [px, py] : series[i].points) {
      f.svg << "<circle cx=\"" << x(px) << "\" cy=\"" << y(py) << "\" r=\"3\" fill=\"" << colour(i) << "\"><title>"
            << escape_xml(series[i].label + ": " + number(py)) << "</title></circle>";
    }
    labels.push_back(series[i].label);
    styles.push_back(std::string("fill=\"") + colour(i) + "\"");
  }
  legend(f, labels, styles);
  return close(f);
}

std::string svg_bar_chart(const std::string& title, const std::string& y_label, const std::vector<std::string>& categories,
                          const std::vector<ChartSeries>& series, const std::vector<std::string>& notes, bool log_y) {
  Frame f;
  open(f, title, y_label);
  double low = INFINITY, high = 0;
  for (const ChartSeries& s : series) {
    for (const auto& p : s.points) {
      if (p.second > 0) low = std::min(low, p.second);
      high = std::max(high, p.second);
    }
  }
  if (!std::isfinite(low)) low = 1;
  const auto y = y_axis(f, low, high, log_y);
  const double group = f.plot_w / static_cast<double>(std::max<std::size_t>(categories.size(), 1));
  const double bar = group * 0.8 / static_cast<double>(std::max<std::size_t>(series.size(), 1));
  const double base = kTop + f.plot_h;
  for (std::size_t c = 0; c < categories.size(); ++c) {
    const double left = kLeft + group * static_cast<double>(c) + group * 0.1;
    double top = base;
    for (std::size_t i = 0; i < series.size(); ++i) {
      if (c >= series[i].points.size()) continue;
      const double v = series[i].points[c].second;
      const double at = v > 0 ? y(v) : base;
      top = std::min(top, at);
      f.svg << "<rect x=\"" << left + bar * static_cast<double>(i) << "\" y=\"" << at << "\" width=\"" << bar * 0.95
            << "\" height=\"" << base - at << "\" fill=\"" << colour(i) << "\"><title>" << escape_xml(series[i].label + ": " + number(v))
            << "</title></rect>";
    }
    if (c < notes.size()) {
      f.svg << "<text x=\"" << left + group * 0.4 << "\" y=\"" << std::max<double>(kTop + 10, top - 4) << "\" text-anchor=\"middle\">"
            << escape_xml(notes[c]) << "</text>";
    }
    f.svg << "<text x=\"" << left + group * 0.4 << "\" y=\"" << base + 16 << "\" text-anchor=\"middle\">" << escape_xml(categories[c])
          << "</text>";
  }
  std::vector<std::string> labels, styles;
  for (std::size_t i = 0; i < series.size(); ++i) {
    labels.push_back(series[i].label);
    styles.push_back(std::string("fill=\"") + colour(i) + "\"");
  }
  legend(f, labels, styles);
  return close(f);
}

std::string svg_stacked_bars(const std::string& title, const std::string& y_label, const std::vector<std::string>& segments,
                             const std::vector<std::vector<double>>& bars, double reference, const std::string& reference_label) {
  Frame f;
  open(f, title, y_label);
  double high = reference;
  for (const auto& b : bars) {
    double sum = 0;
    for (double v : b) sum += std::max(0.0, v);
    high = std::max(high, sum);
  }
  // Headroom above the reference line, so it never sits on the frame.
  const auto y = y_axis(f, 0, high * 1.1, false);
  const double width = f.plot_w / static_cast<double>(std::max<std::size_t>(bars.size(), 1));
  const double base = kTop + f.plot_h;
  f.svg << "<defs><pattern id=\"idle\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
           "<rect width=\"6\" height=\"6\" fill=\"#eeeeee\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#999999\" stroke-width=\"2\"/>"
           "</pattern></defs>";
  const auto fill = [&](std::size_t s) { return s + 1 == segments.size() ? std::string("url(#idle)") : std::string(colour(s)); };
  for (std::size_t b = 0; b < bars.size(); ++b) {
    double at = base, sum = 0;
    for (std::size_t s = 0; s < bars[b].size() && s < segments.size(); ++s) {
      const double v = std::max(0.0, bars[b][s]);
      sum += v;
      const double top = y(sum);
      f.svg << "<rect x=\"" << kLeft + width * (static_cast<double>(b) + 0.1) << "\" y=\"" << top << "\" width=\"" << width * 0.8
            << "\" height=\"" << at - top << "\" fill=\"" << fill(s) << "\" stroke=\"#666666\" stroke-width=\"0.3\"><title>rank " << b
            << ", " << escape_xml(segments[s]) << ": " << number(v) << "</title></rect>";
      at = top;
    }
  }
  if (bars.size() <= 32) {
    for (std::size_t b = 0; b < bars.size(); ++b) {
      f.svg << "<text x=\"" << kLeft + width * (static_cast<double>(b) + 0.5) << "\" y=\"" << base + 14 << "\" text-anchor=\"middle\">" << b
            << "</text>";
    }
  }
  f.svg << "<text x=\"" << kLeft + f.plot_w / 2 << "\" y=\"" << kHeight - 14 << "\" text-anchor=\"middle\">rank</text>";
  if (reference > 0) {
    f.svg << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + f.plot_w << "\" y1=\"" << y(reference) << "\" y2=\"" << y(reference)
          << "\" stroke=\"#000000\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/><text x=\"" << kLeft + f.plot_w - 4 << "\" y=\""
          << y(reference) - 5 << "\" text-anchor=\"end\" font-weight=\"bold\">" << escape_xml(reference_label) << "</text>";
  }
  std::vector<std::string> styles;
  for (std::size_t s = 0; s < segments.size(); ++s) styles.push_back("fill=\"" + fill(s) + "\" stroke=\"#666666\"");
  legend(f, segments, styles);
  return close(f);
}

std::string svg_heat_rows(const std::string& title, const std::vector<std::pair<std::string, std::vector<double>>>& rows) {
  std::size_t columns = 1;
  for (const auto& r : rows) columns = std::max(columns, r.second.size());
  const int row_h = 22, top = kTop, left = 170, width = kWidth - left - 110;
  const int height = top + row_h * static_cast<int>(rows.size()) + 50;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << kWidth << " " << height << "\" width=\"" << kWidth << "\" height=\""
      << height << "\" font-family=\"sans-serif\" font-size=\"11\"><rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>";
  svg << "<defs><pattern id=\"nolink\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
         "<rect width=\"6\" height=\"6\" fill=\"#f4f4f4\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#bbbbbb\" stroke-width=\"1.5\"/>"
         "</pattern></defs>";
  svg << "<text x=\"" << kWidth / 2 << "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">" << escape_xml(title) << "</text>";
  const double cell = static_cast<double>(width) / static_cast<double>(columns);
  // Viridis-like ramp from dark blue (idle) to yellow (busy).
  const auto heat = [](double v) {
    static const int stops[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
    const double t = std::clamp(v, 0.0, 1.0) * 4;
    const int i = std::min(3, static_cast<int>(t));
    const double u = t - i;
    char text[16];
    std::snprintf(text, sizeof text, "#%02x%02x%02x", static_cast<int>(stops[i][0] + u * (stops[i + 1][0] - stops[i][0])),
                  static_cast<int>(stops[i][1] + u * (stops[i + 1][1] - stops[i][1])),
                  static_cast<int>(stops[i][2] + u * (stops[i + 1][2] - stops[i][2])));
    return std::string(text);
  };
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const int y = top + row_h * static_cast<int>(r);
    svg << "<text x=\"" << left - 6 << "\" y=\"" << y + 15 << "\" text-anchor=\"end\">" << escape_xml(rows[r].first) << "</text>";
    for (std::size_t c = 0; c < columns; ++c) {
      const bool present = c < rows[r].second.size() && !std::isnan(rows[r].second[c]);
      svg << "<rect x=\"" << left + cell * static_cast<double>(c) << "\" y=\"" << y << "\" width=\"" << cell << "\" height=\"" << row_h - 2
          << "\" fill=\"" << (present ? heat(rows[r].second[c]) : std::string("url(#nolink)")) << "\">";
      if (present) svg << "<title>" << number(rows[r].second[c] * 100) << "%</title>";
      svg << "</rect>";
    }
  }
  const int legend_y = top + row_h * static_cast<int>(rows.size()) + 14;
  for (int k = 0; k <= 10; ++k) {
    svg << "<rect x=\"" << left + k * 18 << "\" y=\"" << legend_y << "\" width=\"18\" height=\"10\" fill=\"" << heat(k / 10.0) << "\"/>";
  }
  svg << "<text x=\"" << left << "\" y=\"" << legend_y + 24 << "\">0%</text><text x=\"" << left + 198 << "\" y=\"" << legend_y + 24
      << "\" text-anchor=\"end\">100% busy</text>";
  svg << "<rect x=\"" << left + 240 << "\" y=\"" << legend_y << "\" width=\"18\" height=\"10\" fill=\"url(#nolink)\" stroke=\"#999999\"/>"
      << "<text x=\"" << left + 264 << "\" y=\"" << legend_y + 9 << "\">no link (the tier has fewer)</text>";
  svg << "<text x=\"" << left << "\" y=\"" << top - 6 << "\">links of each tier, busiest first</text></svg>";
  return svg.str();
}

}  // namespace fabricsim
