//===- Reductions.cpp - ober reductions as linalg.generic -----------------===//
//
// Part of Ober-Train. `reduce_sum`, `reduce_mean`, `reduce_max` and
// `reduce_min` become one linalg.generic with the reduced dimensions as
// reduction iterators, accumulating bf16 and f16 in f32 (the interpreter
// accumulates in double); max and min propagate NaN; a mean divides the sum
// by the reduced element count. `keepdims` expands the result.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

namespace {

Value combine(OpBuilder &b, Location loc, Combine kind, Value acc, Value x) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (kind) {
  case Combine::Sum:
    return isFloat ? Value(arith::AddFOp::create(b, loc, acc, x))
                   : Value(arith::AddIOp::create(b, loc, acc, x));
  case Combine::Max:
    return isFloat ? Value(arith::MaximumFOp::create(b, loc, acc, x))
                   : Value(arith::MaxSIOp::create(b, loc, acc, x));
  case Combine::Min:
    return isFloat ? Value(arith::MinimumFOp::create(b, loc, acc, x))
                   : Value(arith::MinSIOp::create(b, loc, acc, x));
  }
  llvm_unreachable("combine kind");
}

/// The neutral start of `kind` in `type`.
Value identity(OpBuilder &b, Location loc, Combine kind, Type type) {
  if (kind == Combine::Sum)
    return scalarConstant(b, loc, type, 0.0);
  bool max = kind == Combine::Max;
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, b.getFloatAttr(f, max ? -std::numeric_limits<double>::infinity()
                                      : std::numeric_limits<double>::infinity()));
  unsigned w = type.getIntOrFloatBitWidth();
  APInt v = max ? APInt::getSignedMinValue(w) : APInt::getSignedMaxValue(w);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
}

template <typename Op>
struct ReductionLowering : OpRewritePattern<Op> {
  ReductionLowering(MLIRContext *ctx, Combine kind, bool mean)
      : OpRewritePattern<Op>(ctx), kind(kind), mean(mean) {}

  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto in = cast<RankedTensorType>(op.getInput().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!in.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    ArrayRef<int64_t> axes = op.getAxes();
    Type element = in.getElementType(), acc = computeType(element);
    int64_t count = 1;
    for (int64_t d : axes)
      count *= in.getDimSize(d);
    Value out = reduceDims(rewriter, loc, op.getInput(), axes, kind);
    // The mean's division and the rounding back, elementwise.
    if (mean || acc != element)
      out = mapElements(
          rewriter, loc,
          cast<RankedTensorType>(out.getType()).clone(element), out,
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value v = args[0];
            if (mean)
              v = arith::DivFOp::create(b, l, v,
                                        scalarConstant(b, l, acc, double(count)));
            return narrow(b, l, v, element);
          });
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, out, result.getShape()));
    return success();
  }

  Combine kind;
  bool mean;
};

} // namespace

Value lowering::reduceDims(OpBuilder &b, Location loc, Value input,
                           ArrayRef<int64_t> axes, Combine kind) {
  auto in = cast<RankedTensorType>(input.getType());
  Type acc = computeType(in.getElementType());
  int64_t rank = in.getRank();
  SmallVector<int64_t> kept;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (reduced)
      continue;
    kept.push_back(in.getDimSize(d));
    outExprs.push_back(b.getAffineDimExpr(d));
  }
  auto accType = RankedTensorType::get(kept, acc);
  Value init = filled(b, loc, accType, identity(b, loc, kind, acc));
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, outExprs, b.getContext())};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{accType}, ValueRange{input}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(
            nb, l, combine(nb, l, kind, args[1], widen(nb, l, args[0])));
      });
  return generic.getResult(0);
}

void lowering::populateReductionPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ReductionLowering<ReduceSumOp>>(ctx, Combine::Sum, false);
  patterns.add<ReductionLowering<ReduceMeanOp>>(ctx, Combine::Sum, true);
  patterns.add<ReductionLowering<ReduceMaxOp>>(ctx, Combine::Max, false);
  patterns.add<ReductionLowering<ReduceMinOp>>(ctx, Combine::Min, false);
}
