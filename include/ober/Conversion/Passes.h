//===- Passes.h - conversions ------------------------------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_CONVERSION_PASSES_H
#define OBER_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ober {

/// The module attribute where convert-ober-to-linalg lists the library
/// kernels it calls, one dictionary per distinct use: {name = "<kernel>",
/// desc = array<i64: ...>} (ober/Runtime/CPUKernels.h).
constexpr llvm::StringLiteral kKernelsAttrName = "ober_cpu.kernels";

/// Where convert-shard-to-runtime lists the grid axes of each group kind
/// the program's collectives use (an array of `array<i64: ...>`), and the
/// shape of the grid (`array<i64: ...>`).
constexpr llvm::StringLiteral kGroupsAttrName = "ober_rt.groups";
constexpr llvm::StringLiteral kGridAttrName = "ober_rt.grid";

#define GEN_PASS_DECL
#include "ober/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ober/Conversion/Passes.h.inc"

} // namespace mlir::ober

#endif // OBER_CONVERSION_PASSES_H
