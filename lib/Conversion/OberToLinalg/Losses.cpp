//===- Losses.cpp - cross-entropy and MSE as linalg -----------------------===//
//
// Part of Ober-Train. Cross-entropy over the last dimension as the
// interpreter computes it: log_softmax, then per sample the target's log
// probability (class indices) or the targets' weighted sum (probabilities)
// and the sum of log probabilities, mixed by label smoothing:
// -((1 - s) * picked + s / C * sum). Samples at `ignore_index` give 0 and
// are not counted by the mean. A class index out of range picks nothing
// (the interpreter reports an error). MSE is the mean or sum of squared
// differences.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

namespace {

SmallVector<int64_t> allAxes(int64_t rank) {
  return llvm::to_vector(llvm::seq<int64_t>(0, rank));
}

/// Whether a class target is kept (not `ignore`).
Value kept(OpBuilder &b, Location loc, Value target, int64_t ignore) {
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne, asI64(b, loc, target),
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(ignore)));
}

/// The per-sample `losses` (compute type) reduced by `reduction` over
/// `count` (a 0-D compute-type tensor; null: the number of samples), in
/// `element`, shaped as `result`.
Value reduceLosses(OpBuilder &b, Location loc, Value losses, Value count,
                   LossReduction reduction, Type element,
                   RankedTensorType result) {
  auto type = cast<RankedTensorType>(losses.getType());
  if (reduction == LossReduction::none)
    return mapElements(b, loc, type.clone(element), losses,
                       [&](OpBuilder &nb, Location l, ValueRange v) {
                         return narrow(nb, l, v[0], element);
                       });
  Value sum =
      reduceDims(b, loc, losses, allAxes(type.getRank()), Combine::Sum);
  Type acc = type.getElementType();
  SmallVector<Value> inputs = {sum};
  if (reduction == LossReduction::mean && count)
    inputs.push_back(count);
  double samples = std::max<int64_t>(type.getNumElements(), 1);
  return mapElements(
      b, loc, result, inputs, [&](OpBuilder &nb, Location l, ValueRange v) {
        Value r = v[0];
        if (reduction == LossReduction::mean)
          r = arith::DivFOp::create(
              nb, l, r,
              v.size() > 1 ? v[1] : scalarConstant(nb, l, acc, samples));
        return narrow(nb, l, r, element);
      });
}

struct CrossEntropyLowering : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto logits = cast<RankedTensorType>(op.getLogits().getType());
    auto targets = cast<RankedTensorType>(op.getTargets().getType());
    if (!logits.hasStaticShape() || !targets.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Type element = logits.getElementType(), acc = computeType(element);
    int64_t rank = logits.getRank(), classes = logits.getShape().back();
    bool classTargets = !isa<FloatType>(targets.getElementType());
    double smoothing = op.getLabelSmoothing().convertToDouble();
    std::optional<int64_t> ignore = op.getIgnoreIndex();
    Value logProbs = softmaxOf(rewriter, loc, op.getLogits(), rank - 1,
                               /*log=*/true, acc);
    // Per sample: the picked (target-weighted) and the summed log
    // probabilities.
    SmallVector<int64_t> samples(logits.getShape().drop_back());
    auto sampleType = RankedTensorType::get(samples, acc);
    Value zero = scalarConstant(rewriter, loc, acc, 0.0);
    Value init = filled(rewriter, loc, sampleType, zero);
    SmallVector<AffineExpr> sampleExprs;
    for (int64_t d = 0; d + 1 < rank; ++d)
      sampleExprs.push_back(rewriter.getAffineDimExpr(d));
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    AffineMap perSample = AffineMap::get(rank, 0, sampleExprs, getContext());
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.back() = utils::IteratorType::reduction;
    auto terms = linalg::GenericOp::create(
        rewriter, loc, TypeRange{sampleType, sampleType},
        ValueRange{logProbs, op.getTargets()}, ValueRange{init, init},
        {id, classTargets ? perSample : id, perSample, perSample}, iterators,
        [&](OpBuilder &b, Location l, ValueRange v) {
          Value lp = v[0], weight;
          if (classTargets) {
            Value c = arith::IndexCastOp::create(
                b, l, b.getI64Type(), linalg::IndexOp::create(b, l, rank - 1));
            Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                              c, asI64(b, l, v[1]));
            weight = arith::SelectOp::create(b, l, hit, lp,
                                             scalarConstant(b, l, acc, 0.0));
          } else {
            weight = arith::MulFOp::create(b, l, widen(b, l, v[1]), lp);
          }
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::AddFOp::create(b, l, v[2], weight),
                         arith::AddFOp::create(b, l, v[3], lp)});
        });
    Value picked = terms.getResult(0), summed = terms.getResult(1);
    // -((1 - s) * picked + s / C * summed), 0 at ignored samples.
    SmallVector<Value> inputs = {picked, summed};
    if (classTargets && ignore)
      inputs.push_back(op.getTargets());
    Value losses = mapElements(
        rewriter, loc, sampleType, inputs,
        [&](OpBuilder &b, Location l, ValueRange v) -> Value {
          Value mixed = arith::AddFOp::create(
              b, l,
              arith::MulFOp::create(b, l, scalarConstant(b, l, acc, 1 - smoothing),
                                    v[0]),
              arith::MulFOp::create(
                  b, l, scalarConstant(b, l, acc, smoothing / classes), v[1]));
          Value loss = arith::NegFOp::create(b, l, mixed);
          if (v.size() < 3)
            return loss;
          return arith::SelectOp::create(b, l, kept(b, l, v[2], *ignore), loss,
                                         scalarConstant(b, l, acc, 0.0));
        });
    Value count;
    if (classTargets && ignore) {
      Value counted = mapElements(
          rewriter, loc, sampleType, op.getTargets(),
          [&](OpBuilder &b, Location l, ValueRange v) -> Value {
            return arith::UIToFPOp::create(b, l, acc, kept(b, l, v[0], *ignore));
          });
      count = reduceDims(rewriter, loc, counted, allAxes(sampleType.getRank()),
                         Combine::Sum);
    }
    rewriter.replaceOp(
        op, reduceLosses(rewriter, loc, losses, count, op.getReduction(),
                         element,
                         cast<RankedTensorType>(op.getResult().getType())));
    return success();
  }
};

struct MSELossLowering : OpRewritePattern<MSELossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MSELossOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getInput().getType());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Type element = type.getElementType(), acc = computeType(element);
    Value squares = mapElements(
        rewriter, loc, type.clone(acc), {op.getInput(), op.getTarget()},
        [&](OpBuilder &b, Location l, ValueRange v) -> Value {
          Value d = arith::SubFOp::create(b, l, widen(b, l, v[0]),
                                          widen(b, l, v[1]));
          return arith::MulFOp::create(b, l, d, d);
        });
    rewriter.replaceOp(
        op, reduceLosses(rewriter, loc, squares, Value(), op.getReduction(),
                         element,
                         cast<RankedTensorType>(op.getResult().getType())));
    return success();
  }
};

} // namespace

void lowering::populateLossPatterns(RewritePatternSet &patterns) {
  patterns.add<CrossEntropyLowering, MSELossLowering>(patterns.getContext());
}
