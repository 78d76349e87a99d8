// Hashes that never change between builds, machines or runs: what a seed, a
// name or a list is turned into wherever the result is recorded and later
// replayed or compared (keys, per-trial seeds, a suite's digest).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace idemproof {

inline constexpr std::uint64_t kStableHashBasis = 1469598103934665603ULL;

// FNV-1a, 64 bits, over the bytes of `text`, starting from `basis`.
inline std::uint64_t StableHash(std::string_view text, std::uint64_t basis = kStableHashBasis) {
  std::uint64_t h = basis;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// splitmix64: a well-spread 64-bit value from any 64-bit input.
inline std::uint64_t MixBits(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace idemproof
