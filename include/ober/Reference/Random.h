//===- Random.h - counter-based random numbers ------------------*- C++ -*-===//
//
// Part of Ober-Train. Random values are pure functions of (seed, position),
// so dropout masks and seeded initialisation are identical on every device,
// in every pass and however a tensor is sharded. Generated code uses the same
// function.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_REFERENCE_RANDOM_H
#define OBER_REFERENCE_RANDOM_H

#include <cstdint>

namespace mlir::ober::reference {

/// SplitMix64 finaliser of (seed, counter).
inline uint64_t randomBits(uint64_t seed, uint64_t counter) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (counter + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Uniform in [0, 1) with 53 random bits.
inline double uniformAt(uint64_t seed, uint64_t counter) {
  return static_cast<double>(randomBits(seed, counter) >> 11) * 0x1.0p-53;
}

} // namespace mlir::ober::reference

#endif // OBER_REFERENCE_RANDOM_H
