//===- Init.h - the initial value of a parameter without weights -*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). A parameter without weights
// starts from a seed, identically in the tools (`ober-run --init-seed`) and
// in training executables: a vector named like a scale (`...weight`,
// `...scale`, `...gamma`) is ones, any other vector zeros, and anything
// else draws N(0, 0.02^2) by Box-Muller from two counter-based uniforms of
// the key `seed ^ hash(name)` (the hash is the compiler's; executables
// carry it in their manifest).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_INIT_H
#define OBER_RUNTIME_INIT_H

#include "ober/Runtime/Program.h"

#include <cstdint>
#include <string>

namespace ober::rt {

/// The standard deviation of drawn parameters.
constexpr double kInitStddev = 0.02;

/// How parameter `name` of `rank` dimensions starts.
InitKind initKindOf(const std::string &name, size_t rank);

/// Element `index` of a parameter of `kind` with key `nameHash` (before
/// the seed) under `seed`.
double initialValue(InitKind kind, uint64_t nameHash, uint64_t seed,
                    int64_t index);

} // namespace ober::rt

#endif // OBER_RUNTIME_INIT_H
