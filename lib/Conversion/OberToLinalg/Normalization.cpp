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

/// The statistics of `x` over some of its dimensions, in the compute type,
/// with those dimensions kept as size 1 (so that they broadcast against
/// `x`): the mean, and the biased variance (the mean of squared
/// deviations); for RMS norm no mean, and the mean square.
struct Moments {
  Value mean, variance;
};

Moments momentsOver(OpBuilder &b, Location loc, Value x,
                    ArrayRef<int64_t> axes, bool rms) {
  auto type = cast<RankedTensorType>(x.getType());
  Type acc = computeType(type.getElementType());
  int64_t size = 1;
  SmallVector<int64_t> kept(type.getShape());
  for (int64_t d : axes) {
    size *= type.getDimSize(d);
    kept[d] = 1;
  }
  auto meanOf = [&](Value values) {
    Value sum = reduceDims(b, loc, values, axes, Combine::Sum);
    Value mean = mapElements(
        b, loc, cast<RankedTensorType>(sum.getType()), sum,
        [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
          return arith::DivFOp::create(nb, l, v[0],
                                       scalarConstant(nb, l, acc, double(size)));
        });
    return reshapeTo(b, loc, mean, kept);
  };
  Moments m;
  if (!rms)
    m.mean = meanOf(x);
  SmallVector<Value> inputs = {x};
  if (m.mean)
    inputs.push_back(m.mean);
  Value squares = mapElements(
      b, loc, type.clone(acc), inputs,
      [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
        Value c = widen(nb, l, v[0]);
        if (v.size() > 1)
          c = arith::SubFOp::create(nb, l, c, v[1]);
        return arith::MulFOp::create(nb, l, c, c);
      });
  m.variance = meanOf(squares);
  return m;
}

/// `(x - mean) / sqrt(variance + epsilon) * scale + bias`, each operand
/// broadcast against `x` (no `mean` for RMS norm; `scale` and `bias` when
/// given), in the compute type and rounded to `x`'s element type.
Value normalize(OpBuilder &b, Location loc, Value x, Value mean,
                Value variance, Value scale, Value bias, double epsilon) {
  auto type = cast<RankedTensorType>(x.getType());
  Type element = type.getElementType(), acc = computeType(element);
  SmallVector<Value> inputs = {x, variance};
  for (Value v : {mean, scale, bias})
    if (v)
      inputs.push_back(v);
  return mapElements(
      b, loc, type, inputs, [&](OpBuilder &nb, Location l, ValueRange v) {
        unsigned next = 2;
        Value y = widen(nb, l, v[0]);
        if (mean)
          y = arith::SubFOp::create(nb, l, y, widen(nb, l, v[next++]));
        Value inv = arith::DivFOp::create(
            nb, l, scalarConstant(nb, l, acc, 1.0),
            math::SqrtOp::create(
                nb, l,
                arith::AddFOp::create(nb, l, widen(nb, l, v[1]),
                                      scalarConstant(nb, l, acc, epsilon))));
        y = arith::MulFOp::create(nb, l, y, inv);
        if (scale)
          y = arith::MulFOp::create(nb, l, y, widen(nb, l, v[next++]));
        if (bias)
          y = arith::AddFOp::create(nb, l, y, widen(nb, l, v[next++]));
        return narrow(nb, l, y, element);
      });
}

/// layer_norm and rms_norm over `[axis, rank)`.
Value normalizeTrailing(OpBuilder &b, Location loc, Value x, int64_t axis,
                        double epsilon, Value scale, Value bias, bool rms) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(axis, rank));
  Moments m = momentsOver(b, loc, x, axes, rms);
  return normalize(b, loc, x, m.mean, m.variance, scale, bias, epsilon);
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

struct BatchNormInferenceLowering : OpRewritePattern<BatchNormInferenceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormInferenceOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    int64_t rank = type.getRank();
    auto channels = [&](Value v) { return perChannel(rewriter, loc, v, rank); };
    rewriter.replaceOp(
        op, normalize(rewriter, loc, op.getInput(), channels(op.getMean()),
                      channels(op.getVariance()), channels(op.getScale()),
                      channels(op.getBias()),
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
    int64_t rank = type.getRank(), channels = type.getDimSize(1), count = 1;
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < rank; ++d)
      if (d != 1) {
        axes.push_back(d);
        count *= type.getDimSize(d);
      }
    Moments m = momentsOver(rewriter, loc, op.getInput(), axes, false);
    Value y = normalize(rewriter, loc, op.getInput(), m.mean, m.variance,
                        perChannel(rewriter, loc, op.getScale(), rank),
                        perChannel(rewriter, loc, op.getBias(), rank),
                        op.getEpsilon().convertToDouble());
    double momentum = op.getMomentum().convertToDouble();
    double unbias = count > 1 ? double(count) / double(count - 1) : 1.0;
    auto running = [&](Value old, Value batch, double factor) {
      auto t = cast<RankedTensorType>(old.getType());
      return mapElements(
          rewriter, loc, t, {old, reshapeTo(rewriter, loc, batch, {channels})},
          [&](OpBuilder &nb, Location l, ValueRange v) {
            Value kept = arith::MulFOp::create(
                nb, l, widen(nb, l, v[0]),
                scalarConstant(nb, l, acc, 1 - momentum));
            Value fresh = arith::MulFOp::create(
                nb, l, v[1], scalarConstant(nb, l, acc, momentum * factor));
            return narrow(nb, l, arith::AddFOp::create(nb, l, kept, fresh),
                          t.getElementType());
          });
    };
    rewriter.replaceOp(op, {y, running(op.getRunningMean(), m.mean, 1.0),
                            running(op.getRunningVar(), m.variance, unbias)});
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
