//===- Init.cpp - the initial value of a parameter without weights --------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Init.h"

#include "ober/Runtime/Random.h"

#include <cmath>

using namespace ober::rt;

static bool endsWith(const std::string &s, const char *suffix) {
  std::string t(suffix);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

InitKind ober::rt::initKindOf(const std::string &name, size_t rank) {
  if (rank != 1)
    return InitKind::Normal;
  bool scale = endsWith(name, "weight") || endsWith(name, "scale") ||
               endsWith(name, "gamma");
  return scale ? InitKind::Ones : InitKind::Zeros;
}

double ober::rt::initialValue(InitKind kind, uint64_t nameHash, uint64_t seed,
                              int64_t index) {
  switch (kind) {
  case InitKind::Ones:
    return 1.0;
  case InitKind::Zeros:
    return 0.0;
  case InitKind::Normal:
    break;
  }
  // Box-Muller on two counter-based uniforms.
  uint64_t key = seed ^ nameHash;
  double u1 = uniformAt(key, 2 * index);
  double u2 = uniformAt(key, 2 * index + 1);
  return kInitStddev * std::sqrt(-2.0 * std::log(1.0 - u1)) *
         std::cos(2 * M_PI * u2);
}
