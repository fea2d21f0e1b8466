//===- Pooling.cpp - pooling and its gradients as linalg.generic ----------===//
//
// Part of Ober-Train. As the interpreter's windows (lib/Reference/Kernels.h)
// read them: a window of output position `o` starts at `o * stride -
// pad_begin` and reads every `dilation`-th position over `kernel`, skipping
// positions outside the input.
//
// - max_pool: the largest value of the window (NaN if any is NaN);
//   average pooling sums the window and divides by the positions it covers
//   in the padded input (`count_include_pad`) or by the real ones.
//   Both loop over output and window positions, the input padded so that
//   every window lies inside (with a value that never wins, or zeros).
// - The gradients gather: each input position sums the output gradients of
//   the windows that reach it. max_pool_grad first finds each window's
//   winner (the first maximum in row-major order; NaN beats any number).
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

/// A pooling op's windows over `[N, C, in...]` into `[N, C, out...]`.
struct Windows {
  SmallVector<int64_t> in, out, kernel, stride, dilation, padBegin, padEnd;

  Windows(RankedTensorType input, RankedTensorType output,
          ArrayRef<int64_t> kernelSizes, ArrayRef<int64_t> strides,
          ArrayRef<int64_t> padding, ArrayRef<int64_t> dilations)
      : in(input.getShape().drop_front(2)),
        out(output.getShape().drop_front(2)), kernel(kernelSizes),
        stride(strides), padBegin(padding.take_front(kernelSizes.size())),
        padEnd(padding.drop_front(kernelSizes.size())) {
    if (dilations.empty())
      dilation.assign(kernel.size(), 1);
    else
      dilation.assign(dilations.begin(), dilations.end());
  }
  size_t rank() const { return kernel.size(); }
  /// The padded extent every window of dimension `i` lies in.
  int64_t paddedExtent(size_t i) const {
    return std::max(in[i] + padBegin[i],
                    (out[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) +
                        1);
  }
  /// Output candidates of an input position per dimension (window offsets
  /// from the last window that can reach it).
  int64_t candidates(size_t i) const {
    return ((kernel[i] - 1) * dilation[i]) / stride[i] + 1;
  }
};

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// `input` padded by `padBegin` before and up to each window's extent
/// after, with `value`.
Value padForWindows(OpBuilder &b, Location loc, Value input, const Windows &w,
                    Value value) {
  SmallVector<int64_t> low(2, 0), high(2, 0);
  for (size_t i = 0; i < w.rank(); ++i) {
    low.push_back(w.padBegin[i]);
    high.push_back(w.paddedExtent(i) - w.in[i] - w.padBegin[i]);
  }
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; }))
    return input;
  return padWith(b, loc, input, low, high, value);
}

/// One generic over the output positions (parallel) and the window
/// positions (reduction, innermost) of `padded`, folding with `fold` from
/// `init`.
Value foldWindows(OpBuilder &b, Location loc, Value padded, const Windows &w,
                  RankedTensorType result, Value init,
                  function_ref<Value(OpBuilder &, Location, Value, Value)> fold) {
  size_t k = w.rank(), loops = 2 + 2 * k;
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> inExprs = {b.getAffineDimExpr(0),
                                     b.getAffineDimExpr(1)},
                          outExprs = inExprs, windowExprs;
  for (size_t i = 0; i < k; ++i) {
    AffineExpr o = b.getAffineDimExpr(2 + i), r = b.getAffineDimExpr(2 + k + i);
    inExprs.push_back(o * w.stride[i] + r * w.dilation[i]);
    outExprs.push_back(o);
    windowExprs.push_back(r);
  }
  SmallVector<utils::IteratorType> iterators(2 + k,
                                             utils::IteratorType::parallel);
  iterators.append(k, utils::IteratorType::reduction);
  // The window's shape gives the reduction loops their bounds.
  Value window = tensor::EmptyOp::create(
      b, loc, w.kernel, cast<RankedTensorType>(padded.getType()).getElementType());
  Value acc = filled(b, loc, result, init);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{result}, ValueRange{padded, window}, ValueRange{acc},
      {AffineMap::get(loops, 0, inExprs, ctx),
       AffineMap::get(loops, 0, windowExprs, ctx),
       AffineMap::get(loops, 0, outExprs, ctx)},
      iterators, [&](OpBuilder &nb, Location l, ValueRange v) {
        linalg::YieldOp::create(nb, l, fold(nb, l, v[2], v[0]));
      });
  return generic.getResult(0);
}

/// The divisor of average pooling at output position `o` (index values),
/// as `type`: positions the window covers in the padded input, or only
/// the real ones.
Value averageDivisor(OpBuilder &b, Location loc, const Windows &w,
                     ArrayRef<Value> o, bool countIncludePad, Type type) {
  Value count = indexConst(b, loc, 1), zero = indexConst(b, loc, 0);
  for (size_t i = 0; i < w.rank(); ++i) {
    Value start = arith::SubIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, o[i], indexConst(b, loc, w.stride[i])),
        indexConst(b, loc, w.padBegin[i]));
    Value end = arith::MinSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, start,
                                      indexConst(b, loc, w.kernel[i])),
        indexConst(b, loc, w.in[i] + w.padEnd[i]));
    Value covered;
    if (countIncludePad) {
      covered = arith::SubIOp::create(b, loc, end, start);
    } else {
      covered = arith::SubIOp::create(
          b, loc, arith::MinSIOp::create(b, loc, end,
                                         indexConst(b, loc, w.in[i])),
          arith::MaxSIOp::create(b, loc, start, zero));
      covered = arith::MaxSIOp::create(b, loc, covered, zero);
    }
    count = arith::MulIOp::create(b, loc, count, covered);
  }
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  return arith::SIToFPOp::create(b, loc, type, i64);
}

/// The position within a `[in...]` plane of spatial coordinates `x`.
Value planeOffset(OpBuilder &b, Location loc, ArrayRef<Value> x,
                  ArrayRef<int64_t> sizes) {
  Value flat = indexConst(b, loc, 0);
  for (auto [xi, size] : llvm::zip(x, sizes))
    flat = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, flat, indexConst(b, loc, size)),
        xi);
  return flat;
}

struct MaxPoolLowering : OpRewritePattern<MaxPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaxPoolOp op,
                                PatternRewriter &rewriter) const override {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!input.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    Windows w(input, result, op.getKernel(), op.getStrides(), op.getPadding(),
              op.getDilations());
    Type element = input.getElementType();
    Value lowest;
    if (auto f = dyn_cast<FloatType>(element))
      lowest = arith::ConstantOp::create(
          rewriter, loc,
          rewriter.getFloatAttr(f, -std::numeric_limits<double>::infinity()));
    else
      lowest = arith::ConstantOp::create(
          rewriter, loc,
          rewriter.getIntegerAttr(
              element,
              APInt::getSignedMinValue(element.getIntOrFloatBitWidth())));
    Value padded = padForWindows(rewriter, loc, op.getInput(), w, lowest);
    rewriter.replaceOp(
        op, foldWindows(rewriter, loc, padded, w, result, lowest,
                        [&](OpBuilder &b, Location l, Value acc, Value x) {
                          return isa<FloatType>(element)
                                     ? Value(arith::MaximumFOp::create(b, l, acc, x))
                                     : Value(arith::MaxSIOp::create(b, l, acc, x));
                        }));
    return success();
  }
};

struct AvgPoolLowering : OpRewritePattern<AvgPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AvgPoolOp op,
                                PatternRewriter &rewriter) const override {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!input.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    Windows w(input, result, op.getKernel(), op.getStrides(), op.getPadding(),
              {});
    Type element = input.getElementType(), acc = computeType(element);
    Value padded = padForWindows(rewriter, loc, op.getInput(), w,
                                 scalarConstant(rewriter, loc, element, 0.0));
    Value sums = foldWindows(
        rewriter, loc, padded, w, result.clone(acc),
        scalarConstant(rewriter, loc, acc, 0.0),
        [&](OpBuilder &b, Location l, Value a, Value x) -> Value {
          return arith::AddFOp::create(b, l, a, widen(b, l, x));
        });
    bool includePad = op.getCountIncludePad();
    rewriter.replaceOp(
        op, mapElements(rewriter, loc, result, sums,
                        [&](OpBuilder &b, Location l, ValueRange v) {
                          SmallVector<Value> o;
                          for (size_t i = 0; i < w.rank(); ++i)
                            o.push_back(linalg::IndexOp::create(b, l, 2 + i));
                          Value d = averageDivisor(b, l, w, o, includePad, acc);
                          Value zero = scalarConstant(b, l, acc, 0.0);
                          Value q = arith::SelectOp::create(
                              b, l,
                              arith::CmpFOp::create(b, l,
                                                    arith::CmpFPredicate::OEQ,
                                                    d, zero),
                              scalarConstant(b, l, acc,
                                             std::numeric_limits<double>::quiet_NaN()),
                              arith::DivFOp::create(b, l, v[0], d));
                          return narrow(b, l, q, element);
                        }));
    return success();
  }
};

/// The first maximum of each window of `input` as its offset in the input
/// plane (-1 for a window with no input), in row-major window order.
Value windowWinners(OpBuilder &b, Location loc, Value input, const Windows &w,
                    RankedTensorType output) {
  size_t k = w.rank(), loops = 2 + 2 * k;
  MLIRContext *ctx = b.getContext();
  auto in = cast<RankedTensorType>(input.getType());
  Type element = in.getElementType();
  SmallVector<AffineExpr> outExprs = {b.getAffineDimExpr(0),
                                      b.getAffineDimExpr(1)},
                          windowExprs;
  for (size_t i = 0; i < k; ++i) {
    outExprs.push_back(b.getAffineDimExpr(2 + i));
    windowExprs.push_back(b.getAffineDimExpr(2 + k + i));
  }
  SmallVector<utils::IteratorType> iterators(2 + k,
                                             utils::IteratorType::parallel);
  iterators.append(k, utils::IteratorType::reduction);
  Value window = tensor::EmptyOp::create(b, loc, w.kernel, element);
  Value index0 = filled(b, loc, output.clone(b.getIndexType()),
                        indexConst(b, loc, -1));
  Value value0 = zeros(b, loc, output);
  AffineMap outMap = AffineMap::get(loops, 0, outExprs, ctx);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{index0.getType(), value0.getType()}, ValueRange{window},
      ValueRange{index0, value0},
      {AffineMap::get(loops, 0, windowExprs, ctx), outMap, outMap}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange v) {
        Value best = v[1], bestValue = v[2];
        Value zero = indexConst(nb, l, 0);
        Value inside = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
        SmallVector<Value> at = {linalg::IndexOp::create(nb, l, 0),
                                 linalg::IndexOp::create(nb, l, 1)},
                           x;
        for (size_t i = 0; i < k; ++i) {
          Value o = linalg::IndexOp::create(nb, l, 2 + i);
          Value r = linalg::IndexOp::create(nb, l, 2 + k + i);
          Value xi = arith::AddIOp::create(
              nb, l,
              arith::SubIOp::create(
                  nb, l,
                  arith::MulIOp::create(nb, l, o,
                                        indexConst(nb, l, w.stride[i])),
                  indexConst(nb, l, w.padBegin[i])),
              arith::MulIOp::create(nb, l, r, indexConst(nb, l, w.dilation[i])));
          Value size = indexConst(nb, l, w.in[i]);
          inside = arith::AndIOp::create(
              nb, l, inside,
              arith::AndIOp::create(
                  nb, l,
                  arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, xi,
                                        zero),
                  arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, xi,
                                        size)));
          x.push_back(xi);
          // Read a position in range (the value only counts inside).
          at.push_back(clampIndex(nb, l, xi, w.in[i]));
        }
        Value value = tensor::ExtractOp::create(nb, l, input, at);
        Value none = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                           best, zero);
        Value better = replacesBest(nb, l, value, bestValue, /*isMax=*/true,
                                    /*last=*/false);
        Value take = arith::AndIOp::create(
            nb, l, inside, arith::OrIOp::create(nb, l, none, better));
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(nb, l, take,
                                               planeOffset(nb, l, x, w.in),
                                               best),
                       arith::SelectOp::create(nb, l, take, value,
                                               bestValue)});
      });
  return generic.getResult(0);
}

/// Each input position of `result` sums, over the windows that reach it,
/// `share(at, g, offset)`: `at` the window's output position `[n, c,
/// o...]`, `g` the output gradient `gy` there (in the compute type),
/// `offset` the input position in its plane.
Value gatherWindows(
    OpBuilder &b, Location loc, const Windows &w, RankedTensorType result,
    Value gy,
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value> at, Value g,
                       Value offset)>
        share) {
  size_t k = w.rank(), loops = 2 + 2 * k;
  MLIRContext *ctx = b.getContext();
  Type acc = computeType(result.getElementType());
  SmallVector<AffineExpr> outExprs, candidateExprs;
  for (size_t d = 0; d < 2 + k; ++d)
    outExprs.push_back(b.getAffineDimExpr(d));
  SmallVector<int64_t> candidateShape;
  for (size_t i = 0; i < k; ++i) {
    candidateExprs.push_back(b.getAffineDimExpr(2 + k + i));
    candidateShape.push_back(w.candidates(i));
  }
  SmallVector<utils::IteratorType> iterators(2 + k,
                                             utils::IteratorType::parallel);
  iterators.append(k, utils::IteratorType::reduction);
  Value candidates = tensor::EmptyOp::create(b, loc, candidateShape, acc);
  Value init = zeros(b, loc, result.clone(acc));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{candidates},
      ValueRange{init},
      {AffineMap::get(loops, 0, candidateExprs, ctx),
       AffineMap::get(loops, 0, outExprs, ctx)},
      iterators, [&](OpBuilder &nb, Location l, ValueRange v) {
        Value zero = indexConst(nb, l, 0);
        Value valid = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
        SmallVector<Value> o, x;
        for (size_t i = 0; i < k; ++i) {
          Value xi = linalg::IndexOp::create(nb, l, 2 + i);
          Value j = linalg::IndexOp::create(nb, l, 2 + k + i);
          // The last window starting at or before x, then earlier ones.
          Value shifted =
              arith::AddIOp::create(nb, l, xi, indexConst(nb, l, w.padBegin[i]));
          Value oi = arith::SubIOp::create(
              nb, l,
              arith::DivUIOp::create(nb, l, shifted,
                                     indexConst(nb, l, w.stride[i])),
              j);
          Value reach = arith::SubIOp::create(
              nb, l, shifted,
              arith::MulIOp::create(nb, l, oi, indexConst(nb, l, w.stride[i])));
          auto cmp = [&](arith::CmpIPredicate p, Value a, Value c) {
            return arith::CmpIOp::create(nb, l, p, a, c);
          };
          Value ok = arith::AndIOp::create(
              nb, l, cmp(arith::CmpIPredicate::sge, oi, zero),
              cmp(arith::CmpIPredicate::slt, oi, indexConst(nb, l, w.out[i])));
          ok = arith::AndIOp::create(
              nb, l, ok,
              cmp(arith::CmpIPredicate::sle, reach,
                  indexConst(nb, l, (w.kernel[i] - 1) * w.dilation[i])));
          ok = arith::AndIOp::create(
              nb, l, ok,
              cmp(arith::CmpIPredicate::eq,
                  arith::RemSIOp::create(nb, l, reach,
                                         indexConst(nb, l, w.dilation[i])),
                  zero));
          valid = arith::AndIOp::create(nb, l, valid, ok);
          x.push_back(xi);
          o.push_back(clampIndex(nb, l, oi, w.out[i]));
        }
        SmallVector<Value> at = {linalg::IndexOp::create(nb, l, 0),
                                 linalg::IndexOp::create(nb, l, 1)};
        at.append(o.begin(), o.end());
        Value g = widen(nb, l, tensor::ExtractOp::create(nb, l, gy, at));
        Value s = share(nb, l, at, g, planeOffset(nb, l, x, w.in));
        Value add = arith::SelectOp::create(nb, l, valid, s,
                                            scalarConstant(nb, l, acc, 0.0));
        linalg::YieldOp::create(
            nb, l, arith::AddFOp::create(nb, l, v[1], add).getResult());
      });
  Value out = generic.getResult(0);
  if (acc == result.getElementType())
    return out;
  return mapElements(b, loc, result, out,
                     [&](OpBuilder &nb, Location l, ValueRange v) {
                       return narrow(nb, l, v[0], result.getElementType());
                     });
}

struct MaxPoolGradLowering : OpRewritePattern<MaxPoolGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaxPoolGradOp op,
                                PatternRewriter &rewriter) const override {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto grad = cast<RankedTensorType>(op.getOutputGrad().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!input.hasStaticShape() || !grad.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    Windows w(input, grad, op.getKernel(), op.getStrides(), op.getPadding(),
              op.getDilations());
    Value winners = windowWinners(rewriter, loc, op.getInput(), w, grad);
    rewriter.replaceOp(
        op, gatherWindows(rewriter, loc, w, result, op.getOutputGrad(),
                          [&](OpBuilder &b, Location l, ArrayRef<Value> at,
                              Value g, Value offset) -> Value {
                            Value winner =
                                tensor::ExtractOp::create(b, l, winners, at);
                            Value hit = arith::CmpIOp::create(
                                b, l, arith::CmpIPredicate::eq, winner, offset);
                            return arith::SelectOp::create(
                                b, l, hit, g,
                                scalarConstant(b, l, g.getType(), 0.0));
                          }));
    return success();
  }
};

struct AvgPoolGradLowering : OpRewritePattern<AvgPoolGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AvgPoolGradOp op,
                                PatternRewriter &rewriter) const override {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto grad = cast<RankedTensorType>(op.getOutputGrad().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!input.hasStaticShape() || !grad.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    Windows w(input, grad, op.getKernel(), op.getStrides(), op.getPadding(),
              {});
    bool includePad = op.getCountIncludePad();
    rewriter.replaceOp(
        op, gatherWindows(rewriter, loc, w, result, op.getOutputGrad(),
                          [&](OpBuilder &b, Location l, ArrayRef<Value> at,
                              Value g, Value) -> Value {
                            Value d = averageDivisor(b, l, w, at.drop_front(2),
                                                     includePad, g.getType());
                            // A window covering nothing gives nothing.
                            Value zero = scalarConstant(b, l, g.getType(), 0.0);
                            return arith::SelectOp::create(
                                b, l,
                                arith::CmpFOp::create(
                                    b, l, arith::CmpFPredicate::OEQ, d, zero),
                                zero, arith::DivFOp::create(b, l, g, d));
                          }));
    return success();
  }
};

} // namespace

void lowering::populatePoolingPatterns(RewritePatternSet &patterns) {
  patterns.add<MaxPoolLowering, AvgPoolLowering, MaxPoolGradLowering,
               AvgPoolGradLowering>(patterns.getContext());
}
