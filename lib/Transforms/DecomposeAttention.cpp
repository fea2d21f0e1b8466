//===- DecomposeAttention.cpp - ober.attention into primitive ops ---------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/OberBuilders.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/IR/TypeUtilities.h"
#include "ober/Transforms/AttentionBlocks.h"
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

SmallVector<int64_t> swapLast2(int64_t rank) {
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

Value transposeLast2(PatternRewriter &rewriter, Location loc, Value v) {
  int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
  return TransposeOp::create(rewriter, loc, v,
                             rewriter.getDenseI64ArrayAttr(swapLast2(rank)));
}

/// The attention probabilities `softmax(q k^T * scale + mask)` of `op`
/// (an AttentionOp or AttentionGradOp) in primitive ops; failure when
/// `is_causal` meets a dynamic sequence length.
template <typename OpTy>
FailureOr<Value> probabilities(OpTy op, PatternRewriter &rewriter) {
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
  Value scores = MatmulOp::create(rewriter, loc, op.getQuery(),
                                  transposeLast2(rewriter, loc, op.getKey()));
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
  if (op.getIsCausal())
    scores = SelectOp::create(rewriter, loc, causalKeep(rewriter, loc, lq, lk),
                              scores, negInf);
  return Value(SoftmaxOp::create(rewriter, loc, scores, rank - 1));
}

/// Ops a pattern leaves alone (AutoDiff keeps attention it differentiates
/// by ober.attention_grad).
using Keep = std::function<bool(Operation *)>;

/// Rewrites `OpTy` from its probabilities in primitive ops (`rewrite`),
/// unless `keep` says to leave it.
template <typename OpTy> struct FromProbabilities : OpRewritePattern<OpTy> {
  FromProbabilities(MLIRContext *ctx, Keep keep)
      : OpRewritePattern<OpTy>(ctx), keep(std::move(keep)) {}
  Keep keep;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (keep && keep(op))
      return rewriter.notifyMatchFailure(op, "kept");
    FailureOr<Value> probs = probabilities(op, rewriter);
    if (failed(probs))
      return failure();
    rewrite(op, *probs, rewriter);
    return success();
  }
  virtual void rewrite(OpTy op, Value probs,
                       PatternRewriter &rewriter) const = 0;
};

struct DecomposeAttention : FromProbabilities<AttentionOp> {
  using FromProbabilities::FromProbabilities;
  void rewrite(AttentionOp op, Value probs,
               PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<MatmulOp>(op, probs, op.getValue());
  }
};

/// AttentionGradOp's formulas (its description) over the probabilities
/// computed again.
struct DecomposeAttentionGrad : FromProbabilities<AttentionGradOp> {
  using FromProbabilities::FromProbabilities;
  void rewrite(AttentionGradOp op, Value p,
               PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value gradOut = op.getOutputGrad();
    int64_t rank = op.getQuery().getType().getRank();
    Type elementType = op.getQuery().getType().getElementType();
    Value dv = MatmulOp::create(rewriter, loc, transposeLast2(rewriter, loc, p),
                                gradOut);
    Value dp = MatmulOp::create(rewriter, loc, gradOut,
                                transposeLast2(rewriter, loc, op.getValue()));
    Value rowDot = ReduceSumOp::create(
        rewriter, loc, MulOp::create(rewriter, loc, gradOut, op.getOutput()),
        rewriter.getDenseI64ArrayAttr({rank - 1}), rewriter.getBoolAttr(true));
    Value ds = MulOp::create(
        rewriter, loc,
        MulOp::create(rewriter, loc, p,
                      SubOp::create(rewriter, loc, dp, rowDot)),
        scalarConstant(rewriter, loc, elementType, op.getEffectiveScale()));
    Value dq = MatmulOp::create(rewriter, loc, ds, op.getKey());
    Value dk = MatmulOp::create(rewriter, loc,
                                transposeLast2(rewriter, loc, ds),
                                op.getQuery());
    rewriter.replaceOp(op, {dq, dk, dv});
  }
};

struct DecomposeAttentionPass
    : mlir::ober::impl::DecomposeAttentionPassBase<DecomposeAttentionPass> {
  void runOnOperation() override {
    if (failed(decomposeAttention(getOperation())))
      signalPassFailure();
  }
};

} // namespace

void mlir::ober::populateDecomposeAttentionPatterns(
    RewritePatternSet &patterns, std::function<bool(Operation *)> keep) {
  patterns.add<DecomposeAttention, DecomposeAttentionGrad>(
      patterns.getContext(), keep);
}

LogicalResult mlir::ober::decomposeAttention(
    Operation *root, std::function<bool(Operation *)> keep) {
  RewritePatternSet patterns(root->getContext());
  populateDecomposeAttentionPatterns(patterns, keep);
  if (failed(applyPatternsGreedily(root, std::move(patterns))))
    return failure();
  // Anything left that was not kept could not be decomposed: say which.
  WalkResult result = root->walk([&](Operation *op) {
    if (!isa<AttentionOp, AttentionGradOp>(op) || (keep && keep(op)))
      return WalkResult::advance();
    op->emitError("cannot decompose: is_causal needs static sequence "
                  "lengths, got query ")
        << op->getOperand(0).getType() << " and key "
        << op->getOperand(1).getType();
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}
