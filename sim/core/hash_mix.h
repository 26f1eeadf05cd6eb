#pragma once
// Hashing of composite lookup keys (tuples, edge lists): each part mixed in by a
// multiply, the high bits folded down at the end. For hash maps only; nothing observable
// depends on the values.
#include <cstddef>
#include <cstdint>

namespace fabricsim {

constexpr std::uint64_t hash_mix(std::uint64_t h, std::uint64_t part) { return (h ^ part) * 0xFF51AFD7ED558CCDull; }
constexpr std::size_t hash_finish(std::uint64_t h) { return static_cast<std::size_t>(h ^ (h >> 31)); }

}  // namespace fabricsim
