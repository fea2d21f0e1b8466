//===- Normalization.cpp - softmax and the norms as linalg ----------------===//
//
// Part of Ober-Train. As the interpreter computes them, in the compute type
// (f32 for bf16 and f16), rounded once: softmax and log_softmax from the
// largest value along the axis and the sum of exp(x - largest); layer norm
// over the trailing dimensions from the mean and the biased variance (the
// mean of squared deviations), `(x - mean) / sqrt(var + eps) * scale +
// bias`; RMS norm likewise without the mean; batch norm per channel (with
// the batch's statistics in training, which also update the running ones).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

Value lowering::keepAxis(OpBuilder &b, Location loc, Value reduced,
                         int64_t axis) {
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(reduced.getType()).getShape());
  shape.insert(shape.begin() + axis, 1);
  return reshapeTo(b, loc, reduced, shape);
}

Value lowering::softmaxOf(OpBuilder &b, Location loc, Value x, int64_t axis,
                          bool log, Type element) {
  auto type = cast<RankedTensorType>(x.getType());
  Type acc = computeType(type.getElementType());
  Value largest = keepAxis(b, loc, reduceDims(b, loc, x, {axis}, Combine::Max),
                           axis);
  auto shifted = [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
    return arith::SubFOp::create(nb, l, widen(nb, l, v[0]), v[1]);
  };
  Value exps = mapElements(b, loc, type.clone(acc), {x, largest},
                           [&](OpBuilder &nb, Location l, ValueRange v) {
                             return math::ExpOp::create(nb, l, shifted(nb, l, v));
                           });
  Value sum = keepAxis(b, loc, reduceDims(b, loc, exps, {axis}, Combine::Sum),
                       axis);
  return mapElements(
      b, loc, type.clone(element), {x, largest, sum},
      [&](OpBuilder &nb, Location l, ValueRange v) {
        Value d = shifted(nb, l, v);
        Value r = log ? Value(arith::SubFOp::create(
                            nb, l, d, math::LogOp::create(nb, l, v[2])))
                      : Value(arith::DivFOp::create(
                            nb, l, math::ExpOp::create(nb, l, d), v[2]));
        return narrow(nb, l, r, element);
      });
}

namespace {
template <typename Op> struct SoftmaxLowering : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t axis = op.getAxis();
    rewriter.replaceOp(op, softmaxOf(rewriter, op.getLoc(), op.getInput(),
                                     axis, isa<LogSoftmaxOp>(op),
                                     type.getElementType()));
    return success();
  }
};

/// layer_norm and rms_norm over `[axis, rank)`.
Value normalizeTrailing(OpBuilder &b, Location loc, Value x, int64_t axis,
                        double epsilon, Value scale, Value bias, bool rms) {
  auto type = cast<RankedTensorType>(x.getType());
  Type element = type.getElementType(), acc = computeType(element);
  int64_t rank = type.getRank(), size = 1;
  SmallVector<int64_t> axes, kept(type.getShape().take_front(axis));
  for (int64_t d = axis; d < rank; ++d) {
    axes.push_back(d);
    size *= type.getDimSize(d);
    kept.push_back(1);
  }
  auto perGroup = [&](Value reduced) {
    // The sum over the group divided by its size, with the group's
    // dimensions back as size 1.
    Value mean = mapElements(
        b, loc, cast<RankedTensorType>(reduced.getType()), reduced,
        [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
          return arith::DivFOp::create(nb, l, v[0],
                                       scalarConstant(nb, l, acc, double(size)));
        });
    return reshapeTo(b, loc, mean, kept);
  };
  Value mean;
  if (!rms)
    mean = perGroup(reduceDims(b, loc, x, axes, Combine::Sum));
  auto centered = [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
    Value w = widen(nb, l, v[0]);
    return rms ? w : Value(arith::SubFOp::create(nb, l, w, v[1]));
  };
  SmallVector<Value> inputs = {x};
  if (!rms)
    inputs.push_back(mean);
  Value squares = mapElements(b, loc, type.clone(acc), inputs,
                              [&](OpBuilder &nb, Location l, ValueRange v) {
                                Value c = centered(nb, l, v);
                                return arith::MulFOp::create(nb, l, c, c);
                              });
  Value variance = perGroup(reduceDims(b, loc, squares, axes, Combine::Sum));
  inputs.push_back(variance);
  unsigned at = inputs.size();
  if (scale)
    inputs.push_back(scale);
  if (bias)
    inputs.push_back(bias);
  return mapElements(
      b, loc, type, inputs, [&](OpBuilder &nb, Location l, ValueRange v) {
        Value inv = arith::DivFOp::create(
            nb, l, scalarConstant(nb, l, acc, 1.0),
            math::SqrtOp::create(
                nb, l,
                arith::AddFOp::create(nb, l, v[at - 1],
                                      scalarConstant(nb, l, acc, epsilon))));
        Value y = arith::MulFOp::create(nb, l, centered(nb, l, v), inv);
        unsigned next = at;
        if (scale)
          y = arith::MulFOp::create(nb, l, y, widen(nb, l, v[next++]));
        if (bias)
          y = arith::AddFOp::create(nb, l, y, widen(nb, l, v[next++]));
        return narrow(nb, l, y, element);
      });
}

/// layer_norm and rms_norm (which has no bias).
template <typename Op> struct NormLowering : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    if (!op.getInput().getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    constexpr bool rms = std::is_same_v<Op, RMSNormOp>;
    Value bias;
    if constexpr (!rms)
      bias = op.getBias();
    rewriter.replaceOp(
        op, normalizeTrailing(rewriter, op.getLoc(), op.getInput(),
                              op.getAxis(), op.getEpsilon().convertToDouble(),
                              op.getScale(), bias, rms));
    return success();
  }
};

/// `v` (`[C]`) shaped to broadcast along dimension 1 of a rank-`rank`
/// tensor.
Value perChannel(OpBuilder &b, Location loc, Value v, int64_t rank) {
  SmallVector<int64_t> shape(rank, 1);
  shape[1] = cast<RankedTensorType>(v.getType()).getDimSize(0);
  return reshapeTo(b, loc, v, shape);
}

/// `(x - mean) / sqrt(var + eps) * scale + bias` per channel; `mean` and
/// `var` broadcast along dimension 1 and are in the compute type.
Value normalizeChannels(OpBuilder &b, Location loc, Value x, Value mean,
                        Value var, Value scale, Value bias, double epsilon) {
  auto type = cast<RankedTensorType>(x.getType());
  Type acc = computeType(type.getElementType());
  int64_t rank = type.getRank();
  return mapElements(
      b, loc, type,
      {x, mean, var, perChannel(b, loc, scale, rank),
       perChannel(b, loc, bias, rank)},
      [&](OpBuilder &nb, Location l, ValueRange v) {
        Value inv = arith::DivFOp::create(
            nb, l, scalarConstant(nb, l, acc, 1.0),
            math::SqrtOp::create(
                nb, l,
                arith::AddFOp::create(nb, l, v[2],
                                      scalarConstant(nb, l, acc, epsilon))));
        Value y = arith::MulFOp::create(
            nb, l, arith::SubFOp::create(nb, l, widen(nb, l, v[0]), v[1]), inv);
        y = arith::AddFOp::create(
            nb, l, arith::MulFOp::create(nb, l, y, widen(nb, l, v[3])),
            widen(nb, l, v[4]));
        return narrow(nb, l, y, type.getElementType());
      });
}

struct BatchNormInferenceLowering : OpRewritePattern<BatchNormInferenceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormInferenceOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    Type acc = computeType(type.getElementType());
    auto stat = [&](Value v) {
      auto t = cast<RankedTensorType>(v.getType());
      Value wide = mapElements(rewriter, loc, t.clone(acc), v,
                               [](OpBuilder &nb, Location l, ValueRange a) {
                                 return widen(nb, l, a[0]);
                               });
      return perChannel(rewriter, loc, wide, type.getRank());
    };
    rewriter.replaceOp(
        op, normalizeChannels(rewriter, loc, op.getInput(),
                              stat(op.getMean()), stat(op.getVariance()),
                              op.getScale(), op.getBias(),
                              op.getEpsilon().convertToDouble()));
    return success();
  }
};

/// Batch statistics per channel (the mean and the biased variance over
/// every dimension but 1), the normalized result and the running
/// statistics updated with the unbiased variance, as PyTorch does.
struct BatchNormTrainingLowering : OpRewritePattern<BatchNormTrainingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormTrainingOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    Type acc = computeType(type.getElementType());
    int64_t rank = type.getRank(), count = 1;
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < rank; ++d)
      if (d != 1) {
        axes.push_back(d);
        count *= type.getDimSize(d);
      }
    auto divide = [&](Value sum, double by) {
      return mapElements(rewriter, loc,
                         cast<RankedTensorType>(sum.getType()), sum,
                         [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
                           return arith::DivFOp::create(
                               nb, l, v[0], scalarConstant(nb, l, acc, by));
                         });
    };
    Value x = op.getInput();
    Value mean = divide(reduceDims(rewriter, loc, x, axes, Combine::Sum),
                        double(count));
    Value meanB = perChannel(rewriter, loc, mean, rank);
    Value squares = mapElements(
        rewriter, loc, type.clone(acc), {x, meanB},
        [](OpBuilder &nb, Location l, ValueRange v) -> Value {
          Value d = arith::SubFOp::create(nb, l, widen(nb, l, v[0]), v[1]);
          return arith::MulFOp::create(nb, l, d, d);
        });
    Value var = divide(reduceDims(rewriter, loc, squares, axes, Combine::Sum),
                       double(count));
    Value y = normalizeChannels(rewriter, loc, x, meanB,
                                perChannel(rewriter, loc, var, rank),
                                op.getScale(), op.getBias(),
                                op.getEpsilon().convertToDouble());
    double m = op.getMomentum().convertToDouble();
    double unbias = count > 1 ? double(count) / double(count - 1) : 1.0;
    auto running = [&](Value old, Value batch, double factor) {
      auto t = cast<RankedTensorType>(old.getType());
      return mapElements(
          rewriter, loc, t, {old, batch},
          [&](OpBuilder &nb, Location l, ValueRange v) {
            Value kept = arith::MulFOp::create(
                nb, l, widen(nb, l, v[0]), scalarConstant(nb, l, acc, 1 - m));
            Value fresh = arith::MulFOp::create(
                nb, l, v[1], scalarConstant(nb, l, acc, m * factor));
            return narrow(nb, l, arith::AddFOp::create(nb, l, kept, fresh),
                          t.getElementType());
          });
    };
    rewriter.replaceOp(op, {y, running(op.getRunningMean(), mean, 1.0),
                            running(op.getRunningVar(), var, unbias)});
    return success();
  }
};

} // namespace

void lowering::populateNormalizationPatterns(RewritePatternSet &patterns) {
  patterns.add<SoftmaxLowering<SoftmaxOp>, SoftmaxLowering<LogSoftmaxOp>,
               NormLowering<LayerNormOp>, NormLowering<RMSNormOp>,
               BatchNormInferenceLowering, BatchNormTrainingLowering>(
      patterns.getContext());
}
