#include "sim/core/units.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <utility>

namespace fabricsim {
namespace {

struct Unit {
  std::string_view suffix;
  long double scale;
};

// Splits "12.5us" into 12.5 and "us". Accepts digits with one optional '.', and an
// optional exponent ("1e6"). Rejects signs: no quantity here may be negative.
bool split_number(std::string_view text, long double& value, std::string_view& unit) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::size_t i = 0;
  bool digits = false, dot = false;
  while (i < text.size()) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
    ++i;
  }
  if (!digits) return false;
  // Exponent only when followed by a digit, so "1e" never eats a unit letter.
  if (i + 1 < text.size() && (text[i] == 'e' || text[i] == 'E') && text[i + 1] >= '0' && text[i + 1] <= '9') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  }
  const std::string number(text.substr(0, i));
  char* end = nullptr;
  value = std::strtold(number.c_str(), &end);
  if (end != number.c_str() + number.size()) return false;
  unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  return std::isfinite(value);
}

template <std::size_t N>
std::optional<long double> scaled(std::string_view text, const std::array<Unit, N>& units, bool bare_ok) {
  long double value = 0;
  std::string_view unit;
  if (!split_number(text, value, unit)) return std::nullopt;
  if (unit.empty()) return bare_ok ? std::optional<long double>(value) : std::nullopt;
  for (const Unit& u : units) {
    if (u.suffix == unit) return value * u.scale;
  }
  return std::nullopt;
}

std::optional<std::int64_t> to_int64(std::optional<long double> v) {
  if (!v || *v < 0 || *v > 9.2e18L) return std::nullopt;
  return static_cast<std::int64_t>(std::llroundl(*v));
}

constexpr std::array<Unit, 5> kTimeUnits{{{"ps", 1}, {"ns", 1e3L}, {"us", 1e6L}, {"ms", 1e9L}, {"s", 1e12L}}};

constexpr std::array<Unit, 10> kBandwidthUnits{{
    {"bps", 1}, {"Kbps", 1e3L}, {"Mbps", 1e6L}, {"Gbps", 1e9L}, {"Tbps", 1e12L},
    {"Bps", 8}, {"KBps", 8e3L}, {"MBps", 8e6L}, {"GBps", 8e9L}, {"TBps", 8e12L},
}};

// K, M, G and T alone are binary, as nccl-tests reads its -b and -e (8, 64K, 1G).
constexpr std::array<Unit, 13> kByteUnits{{
    {"B", 1}, {"KB", 1e3L}, {"MB", 1e6L}, {"GB", 1e9L},
    {"KiB", 1024.0L}, {"MiB", 1024.0L * 1024}, {"GiB", 1024.0L * 1024 * 1024},
    {"TiB", 1024.0L * 1024 * 1024 * 1024}, {"TB", 1e12L},
    {"K", 1024.0L}, {"M", 1024.0L * 1024}, {"G", 1024.0L * 1024 * 1024}, {"T", 1024.0L * 1024 * 1024 * 1024},
}};

}  // namespace

std::optional<Time> parse_time(std::string_view text) {
  return to_int64(scaled(text, kTimeUnits, false));
}

std::optional<Bandwidth> parse_bandwidth(std::string_view text) {
  auto v = to_int64(scaled(text, kBandwidthUnits, false));
  if (!v) return std::nullopt;
  return Bandwidth{*v};
}

std::optional<std::int64_t> parse_bytes(std::string_view text) {
  auto v = scaled(text, kByteUnits, true);
  // Sizes are whole bytes: "1.5KiB" is fine (1536), "0.3B" is not.
  if (v && std::fabs(static_cast<double>(*v - std::roundl(*v))) > 1e-6) return std::nullopt;
  return to_int64(v);
}

std::string format_time(Time t) {
  static constexpr std::array<std::pair<Time, const char*>, 4> kSteps{
      {{sec(1), "s"}, {ms(1), "ms"}, {us(1), "us"}, {ns(1), "ns"}}};
  char buf[64];
  for (const auto& [scale, name] : kSteps) {
    if (t >= scale || t <= -scale) {
      std::snprintf(buf, sizeof buf, "%.3f %s", static_cast<double>(t) / static_cast<double>(scale), name);
      return buf;
    }
  }
  std::snprintf(buf, sizeof buf, "%lld ps", static_cast<long long>(t));
  return buf;
}

std::string format_bytes(std::int64_t bytes) {
  static constexpr std::array<std::pair<std::int64_t, const char*>, 4> kSteps{
      {{std::int64_t{1} << 40, "TiB"}, {std::int64_t{1} << 30, "GiB"}, {std::int64_t{1} << 20, "MiB"}, {1024, "KiB"}}};
  char buf[64];
  for (const auto& [scale, name] : kSteps) {
    if (bytes >= scale) {
      std::snprintf(buf, sizeof buf, "%g %s", static_cast<double>(bytes) / static_cast<double>(scale), name);
      return buf;
    }
  }
  std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  return buf;
}

}  // namespace fabricsim
