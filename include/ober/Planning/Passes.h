//===- Passes.h - planning ---------------------------------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_PLANNING_PASSES_H
#define OBER_PLANNING_PASSES_H

#include "ober/Dialect/Ober/IR/OberDialect.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ober {

#define GEN_PASS_DECL
#include "ober/Planning/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ober/Planning/Passes.h.inc"

} // namespace mlir::ober

#endif // OBER_PLANNING_PASSES_H
