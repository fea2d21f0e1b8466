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

#define GEN_PASS_DECL
#include "ober/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ober/Conversion/Passes.h.inc"

} // namespace mlir::ober

#endif // OBER_CONVERSION_PASSES_H
