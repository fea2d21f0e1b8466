//===- Passes.h - partitioning -----------------------------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_PARTITIONING_PASSES_H
#define OBER_PARTITIONING_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ober {

#define GEN_PASS_DECL
#include "ober/Partitioning/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ober/Partitioning/Passes.h.inc"

} // namespace mlir::ober

#endif // OBER_PARTITIONING_PASSES_H
