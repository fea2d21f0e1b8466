//===- Reductions.cpp - ober reductions as linalg.generic -----------------===//
//
// Part of Ober-Train. `reduce_sum`, `reduce_mean`, `reduce_max`,
// `reduce_min` and `reduce_prod` become one linalg.generic with the reduced
// dimensions as reduction iterators; float sums and products accumulate in
// f64, as the interpreter does; max and min propagate NaN; a mean divides the sum
// by the reduced element count. `keepdims` expands the result.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>
#include <type_traits>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

namespace {

/// A sum or product may be reassociated (so that a loop of it vectorizes):
/// the order of additions is the compiler's, as in any BLAS.
Value combine(OpBuilder &b, Location loc, Combine kind, Value acc, Value x) {
  bool isFloat = isa<FloatType>(x.getType());
  auto reassoc = arith::FastMathFlagsAttr::get(b.getContext(),
                                               arith::FastMathFlags::reassoc);
  switch (kind) {
  case Combine::Sum:
    return isFloat ? Value(arith::AddFOp::create(b, loc, acc, x, reassoc))
                   : Value(arith::AddIOp::create(b, loc, acc, x));
  case Combine::Max:
    return isFloat ? Value(arith::MaximumFOp::create(b, loc, acc, x))
                   : Value(arith::MaxSIOp::create(b, loc, acc, x));
  case Combine::Min:
    return isFloat ? Value(arith::MinimumFOp::create(b, loc, acc, x))
                   : Value(arith::MinSIOp::create(b, loc, acc, x));
  case Combine::Prod:
    return isFloat ? Value(arith::MulFOp::create(b, loc, acc, x, reassoc))
                   : Value(arith::MulIOp::create(b, loc, acc, x));
  }
  llvm_unreachable("combine kind");
}

/// The neutral start of `kind` in `type`.
Value identity(OpBuilder &b, Location loc, Combine kind, Type type) {
  if (kind == Combine::Sum || kind == Combine::Prod)
    return scalarConstant(b, loc, type, kind == Combine::Sum ? 0.0 : 1.0);
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

/// argmax and argmin: one generic along the axis carrying the best index
/// and value; NaN wins (the first one, or the last with
/// `select_last_index`), as in the interpreter.
template <typename Op> struct ArgReduceLowering : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto in = cast<RankedTensorType>(op.getInput().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!in.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t axis = op.getAxis(), rank = in.getRank();
    bool isMax = std::is_same_v<Op, ArgMaxOp>, last = op.getSelectLastIndex();
    Type element = in.getElementType(), acc = computeType(element);
    SmallVector<int64_t> kept;
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t d = 0; d < rank; ++d) {
      iterators.push_back(d == axis ? utils::IteratorType::reduction
                                    : utils::IteratorType::parallel);
      if (d == axis)
        continue;
      kept.push_back(in.getDimSize(d));
      outExprs.push_back(rewriter.getAffineDimExpr(d));
    }
    auto indexType = RankedTensorType::get(kept, rewriter.getI64Type());
    Value index0 = filled(rewriter, loc, indexType,
                          arith::ConstantOp::create(
                              rewriter, loc, rewriter.getI64IntegerAttr(-1)));
    Value value0 = zeros(rewriter, loc, indexType.clone(acc));
    AffineMap outMap =
        AffineMap::get(rank, 0, outExprs, rewriter.getContext());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{indexType, value0.getType()},
        ValueRange{op.getInput()}, ValueRange{index0, value0},
        {rewriter.getMultiDimIdentityMap(rank), outMap, outMap}, iterators,
        [&](OpBuilder &b, Location l, ValueRange v) {
          // `best` is the index held (-1: none yet), `x` its value.
          Value y = widen(b, l, v[0]), best = v[1], x = v[2];
          Value j = arith::IndexCastOp::create(
              b, l, b.getI64Type(), linalg::IndexOp::create(b, l, axis));
          Value none = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::slt, best,
              arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0)));
          Value take = arith::OrIOp::create(
              b, l, none, replacesBest(b, l, y, x, isMax, last));
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::SelectOp::create(b, l, take, j, best),
                         arith::SelectOp::create(b, l, take, y, x)});
        });
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, generic.getResult(0),
                                     result.getShape()));
    return success();
  }
};

/// cumsum: a loop along the axis carrying the running sum of the slices
/// (in the compute type; integers wrap), writing each slice's sum before
/// (`exclusive`) or after adding it, from the end with `reverse`.
struct CumSumLowering : OpRewritePattern<CumSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CumSumOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getInput().getType());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t axis = op.getAxis(), rank = type.getRank(),
            size = type.getDimSize(axis);
    Type element = type.getElementType(), acc = computeType(element);
    bool exclusive = op.getExclusive(), reverse = op.getReverse();
    SmallVector<int64_t> sliceShape(type.getShape());
    sliceShape[axis] = 1;
    auto slice = type.clone(sliceShape);
    auto at = [&](OpBuilder &b, Value source, Value offset, Value dest) {
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
          strides(rank, b.getIndexAttr(1));
      for (int64_t s : sliceShape)
        sizes.push_back(b.getIndexAttr(s));
      offsets[axis] = offset;
      if (dest)
        return Value(tensor::InsertSliceOp::create(b, loc, source, dest,
                                                   offsets, sizes, strides));
      return Value(tensor::ExtractSliceOp::create(
          b, loc, cast<RankedTensorType>(source.getType()).clone(sliceShape),
          source, offsets, sizes, strides));
    };
    auto add = [&](OpBuilder &b, Location l, ValueRange v) -> Value {
      if (isa<FloatType>(acc))
        return arith::AddFOp::create(b, l, v[0], widen(b, l, v[1]));
      return arith::AddIOp::create(b, l, v[0], v[1]);
    };
    auto round = [&](OpBuilder &b, Location l, ValueRange v) {
      return narrow(b, l, v[0], element);
    };
    Value zero = zeros(rewriter, loc, slice.clone(acc));
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         element);
    Value lower = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value upper = arith::ConstantIndexOp::create(rewriter, loc, size);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, lower, upper, one, ValueRange{zero, init},
        [&](OpBuilder &b, Location l, Value step, ValueRange carried) {
          Value j = step;
          if (reverse)
            j = arith::SubIOp::create(
                b, l, arith::ConstantIndexOp::create(b, l, size - 1), step);
          Value sum = carried[0], out = carried[1];
          if (exclusive)
            out = at(b, mapElements(b, l, slice, sum, round), j, out);
          sum = mapElements(b, l, slice.clone(acc),
                            {sum, at(b, op.getInput(), j, Value())}, add);
          if (!exclusive)
            out = at(b, mapElements(b, l, slice, sum, round), j, out);
          scf::YieldOp::create(b, l, ValueRange{sum, out});
        });
    rewriter.replaceOp(op, loop.getResult(1));
    return success();
  }
};

} // namespace

Value lowering::isNaN(OpBuilder &b, Location loc, Value v) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
}

Value lowering::replacesBest(OpBuilder &b, Location loc, Value candidate,
                             Value best, bool isMax, bool last) {
  if (!isa<FloatType>(candidate.getType())) {
    Value wins = arith::CmpIOp::create(
        b, loc, isMax ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt,
        candidate, best);
    if (!last)
      return wins;
    return arith::OrIOp::create(
        b, loc, wins,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, candidate,
                              best));
  }
  auto cmpf = [&](arith::CmpFPredicate p) {
    return arith::CmpFOp::create(b, loc, p, candidate, best).getResult();
  };
  Value wins =
      cmpf(isMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT);
  if (last)
    wins = arith::OrIOp::create(b, loc, wins, cmpf(arith::CmpFPredicate::OEQ));
  // A NaN held keeps (unless a later NaN takes it, for the last); a NaN met
  // wins over a number.
  Value heldNaN = isNaN(b, loc, best), metNaN = isNaN(b, loc, candidate);
  Value overNaN = last ? metNaN
                       : arith::ConstantOp::create(b, loc, b.getBoolAttr(false))
                             .getResult();
  return arith::SelectOp::create(b, loc, heldNaN, overNaN,
                                 arith::OrIOp::create(b, loc, metNaN, wins));
}

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
  // Float sums and products accumulate in f64, as the interpreter (and
  // PyTorch's CPU reductions) do: a gradient summed over a batch cancels,
  // and f32 partial sums would leave only its rounding.
  bool wide = isa<FloatType>(acc) &&
              (kind == Combine::Sum || kind == Combine::Prod);
  Type sumType = wide ? Type(b.getF64Type()) : acc;
  auto sums = RankedTensorType::get(kept, sumType);
  Value init = filled(b, loc, sums, identity(b, loc, kind, sumType));
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, outExprs, b.getContext())};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{sums}, ValueRange{input}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value x = widen(nb, l, args[0]);
        if (x.getType() != sumType)
          x = arith::ExtFOp::create(nb, l, sumType, x);
        linalg::YieldOp::create(nb, l, combine(nb, l, kind, args[1], x));
      });
  if (!wide)
    return generic.getResult(0);
  return mapElements(b, loc, sums.clone(acc), generic.getResult(0),
                     [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
                       return arith::TruncFOp::create(nb, l, acc, v[0]);
                     });
}

void lowering::populateReductionPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ReductionLowering<ReduceSumOp>>(ctx, Combine::Sum, false);
  patterns.add<ReductionLowering<ReduceMeanOp>>(ctx, Combine::Sum, true);
  patterns.add<ReductionLowering<ReduceMaxOp>>(ctx, Combine::Max, false);
  patterns.add<ReductionLowering<ReduceMinOp>>(ctx, Combine::Min, false);
  patterns.add<ReductionLowering<ReduceProdOp>>(ctx, Combine::Prod, false);
  patterns.add<ArgReduceLowering<ArgMaxOp>, ArgReduceLowering<ArgMinOp>,
               CumSumLowering>(ctx);
}
