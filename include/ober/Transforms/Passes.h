//===- Passes.h - graph-level transforms -------------------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TRANSFORMS_PASSES_H
#define OBER_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"

namespace mlir::ober {

#define GEN_PASS_DECL
#include "ober/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ober/Transforms/Passes.h.inc"

/// Adds the pattern that rewrites ober.attention into primitive ops.
void populateDecomposeAttentionPatterns(RewritePatternSet &patterns);

} // namespace mlir::ober

#endif // OBER_TRANSFORMS_PASSES_H
