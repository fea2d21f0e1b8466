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

#define GEN_PASS_DECL
#include "ober/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ober/Conversion/Passes.h.inc"

} // namespace mlir::ober

#endif // OBER_CONVERSION_PASSES_H
