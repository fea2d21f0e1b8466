//===- VectorizableMath.cpp - math functions the vectorizer can widen -----===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ober {
#define GEN_PASS_DEF_VECTORIZABLEMATHPASS
#include "ober/Target/CPU/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {
struct VectorizableMath
    : public ober::impl::VectorizableMathPassBase<VectorizableMath> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef op) {
          return llvm::is_contained(
              {math::ExpOp::getOperationName(),
               math::ExpM1Op::getOperationName(),
               math::LogOp::getOperationName(),
               math::Log1pOp::getOperationName(),
               math::Log2Op::getOperationName(),
               math::TanhOp::getOperationName(),
               math::ErfOp::getOperationName()},
              op);
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
