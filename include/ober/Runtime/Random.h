//===- Random.h - counter-based random numbers ------------------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). Random values are pure functions
// of (seed, position), so dropout masks and seeded initialisation are
// identical on every device, in every pass, however a tensor is sharded,
// and in the interpreter, generated code (convert-ober-to-linalg builds the
// same arithmetic from these constants) and training binaries.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_RANDOM_H
#define OBER_RUNTIME_RANDOM_H

#include <cstdint>

namespace ober::rt {

/// SplitMix64: the counter's step and the finaliser's multipliers and
/// shifts.
constexpr uint64_t kRandomStep = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kRandomMix1 = 0xBF58476D1CE4E5B9ull;
constexpr uint64_t kRandomMix2 = 0x94D049BB133111EBull;
constexpr unsigned kRandomShift1 = 30, kRandomShift2 = 27, kRandomShift3 = 31;
/// A uniform keeps the top 53 bits (a double's precision).
constexpr unsigned kUniformShift = 11;
constexpr double kUniformScale = 0x1.0p-53;

/// SplitMix64 finaliser of (seed, counter).
inline uint64_t randomBits(uint64_t seed, uint64_t counter) {
  uint64_t z = seed + kRandomStep * (counter + 1);
  z = (z ^ (z >> kRandomShift1)) * kRandomMix1;
  z = (z ^ (z >> kRandomShift2)) * kRandomMix2;
  return z ^ (z >> kRandomShift3);
}

/// Uniform in [0, 1) with 53 random bits.
inline double uniformAt(uint64_t seed, uint64_t counter) {
  return static_cast<double>(randomBits(seed, counter) >> kUniformShift) *
         kUniformScale;
}

} // namespace ober::rt

#endif // OBER_RUNTIME_RANDOM_H
