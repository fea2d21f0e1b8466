//===- Normalization.cpp - softmax and the norms as linalg ----------------===//
//
// Part of Ober-Train. As the interpreter computes them, in the compute type
// (f32 for bf16 and f16), rounded once: softmax and log_softmax from the
// largest value along the axis and the sum of exp(x - largest); layer norm
// over the trailing dimensions from the mean and the biased variance (the
// mean of squared deviations), `(x - mean) / sqrt(var + eps) * scale +
// bias`; RMS norm likewise without the mean.
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

} // namespace

void lowering::populateNormalizationPatterns(RewritePatternSet &patterns) {
  patterns.add<SoftmaxLowering<SoftmaxOp>, SoftmaxLowering<LogSoftmaxOp>,
               NormLowering<LayerNormOp>, NormLowering<RMSNormOp>>(
      patterns.getContext());
}
