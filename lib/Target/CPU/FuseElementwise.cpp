//===- FuseElementwise.cpp - elementwise chains as one loop ---------------===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ober {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "ober/Target/CPU/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

bool isParallelGeneric(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && generic.getNumLoops() == generic.getNumParallelLoops();
}

bool hasOneUse(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  return producer && producer->hasOneUse();
}

/// An elementwise producer whose result other ops also read, fused into an
/// elementwise consumer: the fused op yields the producer's results too and
/// every other reader takes them from it (upstream's pattern would leave
/// the producer in place and compute its values twice). The consumer must
/// read the producer's results one element per iteration (a broadcast
/// result would be written again by every iteration), and the producer's
/// other readers come after the consumer, where the fused op will be.
struct FuseSharedProducer : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!isParallelGeneric(consumer))
      return failure();
    for (OpOperand &operand : consumer->getOpOperands()) {
      auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
      // The producer's results must stay whole tensors of the fused loops
      // (a scalar or broadcast producer is left alone).
      if (!isParallelGeneric(producer) || producer->hasOneUse() ||
          producer.getNumLoops() != consumer.getNumLoops() ||
          !consumer.getMatchingIndexingMap(&operand).isPermutation() ||
          !llvm::all_of(producer.getDpsInitsMutable(), [&](OpOperand &init) {
            return producer.getMatchingIndexingMap(&init).isPermutation();
          }) ||
          !linalg::areElementwiseOpsFusable(&operand))
        continue;
      bool laterReaders = llvm::all_of(producer->getUsers(), [&](Operation *u) {
        return u == consumer || (u->getBlock() == consumer->getBlock() &&
                                 consumer->isBeforeInBlock(u));
      });
      if (!laterReaders)
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      rewriter.eraseOp(consumer);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

struct FuseElementwise
    : public ober::impl::FuseElementwisePassBase<FuseElementwise> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, hasOneUse);
    patterns.add<FuseSharedProducer>(ctx);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, hasOneUse);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
