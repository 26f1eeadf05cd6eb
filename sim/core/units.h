#pragma once
// Parsing of quantities with units, as written in configs: "400Gbps", "450GBps",
// "500ns", "1us", "4KiB", "1GiB". Used before the first event only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/time.h"

namespace fabricsim {

// Each returns nullopt when the text is not a non-negative number followed by a known unit.
// A bare number is accepted only where the unit is implied (bytes).
std::optional<Time> parse_time(std::string_view text);
std::optional<Bandwidth> parse_bandwidth(std::string_view text);
std::optional<std::int64_t> parse_bytes(std::string_view text);

// Short descriptions of what each parser accepts, for error messages.
inline constexpr const char* kTimeUnitsHelp = "a time such as 500ns, 1.5us, 2ms (units ps, ns, us, ms, s)";
inline constexpr const char* kBandwidthUnitsHelp =
    "a bandwidth such as 400Gbps or 450GBps (units bps, Kbps, Mbps, Gbps, Tbps; Bps, KBps, MBps, GBps, TBps)";
inline constexpr const char* kBytesUnitsHelp =
    "a size such as 4096, 4KiB, 1MB, 1GiB or 64K (units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB; K, M, G, T binary)";

std::string format_time(Time t);  // human form, e.g. "12.345 us"
// "1 MiB", "64 KiB", "1.5 KiB", "8 B": binary units, as nccl-tests users read sizes.
std::string format_bytes(std::int64_t bytes);

}  // namespace fabricsim
