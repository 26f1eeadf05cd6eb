#pragma once
// Simulated time is an integer count of picoseconds: exact, cheap to compare, and
// wide enough (int64) for 106 days of simulated time.
#include <cstdint>
#include <limits>

namespace fabricsim {

using Time = std::int64_t;

// 128-bit arithmetic for exact products of bytes and picoseconds (GCC and Clang).
__extension__ typedef unsigned __int128 UInt128;

inline constexpr Time kTimeMax = std::numeric_limits<Time>::max();

constexpr Time ps(std::int64_t v) { return v; }
constexpr Time ns(std::int64_t v) { return v * 1'000; }
constexpr Time us(std::int64_t v) { return v * 1'000'000; }
constexpr Time ms(std::int64_t v) { return v * 1'000'000'000; }
constexpr Time sec(std::int64_t v) { return v * 1'000'000'000'000; }

constexpr double to_seconds(Time t) { return static_cast<double>(t) * 1e-12; }
constexpr double to_us(Time t) { return static_cast<double>(t) * 1e-6; }

// Link rate in bits per second. Serialization is rounded up to the next picosecond,
// so a packet never leaves earlier than the wire allows.
struct Bandwidth {
  std::int64_t bits_per_second = 0;

  static constexpr Bandwidth bps(std::int64_t v) { return {v}; }
  static constexpr Bandwidth gbps(std::int64_t v) { return {v * 1'000'000'000}; }
  // Gigabytes (1e9 bytes) per second, the unit NVLink figures are quoted in.
  static constexpr Bandwidth gBps(std::int64_t v) { return {v * 8'000'000'000}; }

  constexpr double gbps_value() const { return static_cast<double>(bits_per_second) * 1e-9; }
  constexpr bool operator==(const Bandwidth&) const = default;
};

// Time to put `bytes` on a wire of rate `bw`: ceil(bytes * 8 * 1e12 / bps) picoseconds.
constexpr Time serialization(std::int64_t bytes, Bandwidth bw) {
  // A packet's bits in picoseconds, and the rounding, fit 64 bits (up to 1.15 MB): there
  // dividing is a machine instruction rather than a call, once per packet per hop.
  constexpr std::uint64_t kScale = 8u * 1'000'000'000'000u;
  if (bytes >= 0 && static_cast<std::uint64_t>(bytes) <= (UINT64_MAX - static_cast<std::uint64_t>(INT64_MAX)) / kScale && bw.bits_per_second > 0) {
    const std::uint64_t rate = static_cast<std::uint64_t>(bw.bits_per_second);
    return static_cast<Time>((static_cast<std::uint64_t>(bytes) * kScale + rate - 1) / rate);
  }
  const UInt128 bits_ps = static_cast<UInt128>(bytes) * 8u * 1'000'000'000'000u;
  const auto rate = static_cast<UInt128>(bw.bits_per_second);
  return static_cast<Time>((bits_ps + rate - 1) / rate);
}

}  // namespace fabricsim
