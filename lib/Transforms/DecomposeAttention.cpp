//===- DecomposeAttention.cpp - ober.attention into primitive ops ---------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/OberBuilders.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/IR/TypeUtilities.h"
#include "ober/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::ober {
#define GEN_PASS_DEF_DECOMPOSEATTENTIONPASS
#include "ober/Transforms/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;
using namespace mlir::ober;

namespace {

Value scalarConstant(PatternRewriter &rewriter, Location loc,
                     Type elementType, double value) {
  return createScalarConstant(rewriter, loc, elementType, value);
}

struct DecomposeAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType q = op.getQuery().getType();
    Type elementType = q.getElementType();
    int64_t rank = q.getRank();
    int64_t lq = q.getDimSize(rank - 2);
    int64_t lk = op.getKey().getType().getDimSize(rank - 2);
    if (op.getIsCausal() &&
        (ShapedType::isDynamic(lq) || ShapedType::isDynamic(lk)))
      return rewriter.notifyMatchFailure(
          op, "is_causal needs static sequence lengths");

    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 1], perm[rank - 2]);
    Value keyT = TransposeOp::create(rewriter, loc, op.getKey(),
                                     rewriter.getDenseI64ArrayAttr(perm));
    Value scores = MatmulOp::create(rewriter, loc, op.getQuery(), keyT);
    scores = MulOp::create(
        rewriter, loc, scores,
        scalarConstant(rewriter, loc, elementType, op.getEffectiveScale()));

    Value negInf = scalarConstant(rewriter, loc, elementType,
                                  -std::numeric_limits<double>::infinity());
    if (Value mask = op.getMask()) {
      if (getElementTypeOrSelf(mask.getType()).isInteger(1))
        scores = SelectOp::create(rewriter, loc, mask, scores, negInf);
      else
        scores = AddOp::create(rewriter, loc, scores, mask);
    }
    if (op.getIsCausal()) {
      auto indexType = RankedTensorType::get({lq, lk}, rewriter.getI64Type());
      Value rows = IotaOp::create(rewriter, loc, indexType, 0);
      Value cols = IotaOp::create(rewriter, loc, indexType, 1);
      Value keep = CompareOp::create(rewriter, loc, CompareDirection::ge,
                                     rows, cols);
      scores = SelectOp::create(rewriter, loc, keep, scores, negInf);
    }
    Value probs = SoftmaxOp::create(rewriter, loc, scores, rank - 1);
    rewriter.replaceOpWithNewOp<MatmulOp>(op, probs, op.getValue());
    return success();
  }
};

struct DecomposeAttentionPass
    : mlir::ober::impl::DecomposeAttentionPassBase<DecomposeAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Anything left could not be decomposed: say which and why.
    WalkResult result = getOperation().walk([](AttentionOp op) {
      op.emitError("cannot decompose: is_causal needs static sequence "
                   "lengths, got query ")
          << op.getQuery().getType() << " and key " << op.getKey().getType();
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void mlir::ober::populateDecomposeAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeAttention>(patterns.getContext());
}
