//===- Passes.h - training-step construction ---------------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TRAINING_PASSES_H
#define OBER_TRAINING_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"

namespace mlir::ober {

#define GEN_PASS_DECL
#include "ober/Training/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ober/Training/Passes.h.inc"

} // namespace mlir::ober

#endif // OBER_TRAINING_PASSES_H
