//===- Softmax.cpp - softmax and log_softmax as linalg --------------------===//
//
// Part of Ober-Train. As the interpreter computes them: the largest value
// along the axis, the sum of exp(x - largest), then exp(x - largest) / sum
// or x - largest - log(sum), all in the compute type (f32 for bf16 and
// f16), rounded once.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

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
    int64_t axis = op.getAxis() < 0 ? op.getAxis() + type.getRank()
                                    : op.getAxis();
    rewriter.replaceOp(op, softmaxOf(rewriter, op.getLoc(), op.getInput(),
                                     axis, isa<LogSoftmaxOp>(op),
                                     type.getElementType()));
    return success();
  }
};
} // namespace

void lowering::populateNormalizationPatterns(RewritePatternSet &patterns) {
  patterns.add<SoftmaxLowering<SoftmaxOp>, SoftmaxLowering<LogSoftmaxOp>>(
      patterns.getContext());
}
