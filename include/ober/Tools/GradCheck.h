//===- GradCheck.h - finite-difference gradient checks -----------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TOOLS_GRADCHECK_H
#define OBER_TOOLS_GRADCHECK_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::ober {

/// Checks the gradient rules `func` uses: builds its gradient function with
/// respect to its parameters, evaluates it at seeded random arguments, and
/// compares every gradient element with a central finite difference of the
/// loss (the first result). Float arguments are drawn uniformly from
/// [gc_low, gc_high] (function attributes, default [-1, 1]); integer
/// arguments from [0, 3). Prints one line and fails when the largest error
/// exceeds `tolerance` (relative to max(1, |gradient|)). A function with
/// ober.attention is checked twice: attention differentiated through its
/// decomposition, then by ober.attention_grad (a line each).
LogicalResult checkGradients(func::FuncOp func, uint64_t seed,
                             double tolerance, llvm::raw_ostream &os);

} // namespace mlir::ober

#endif // OBER_TOOLS_GRADCHECK_H
