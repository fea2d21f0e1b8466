//===- Indexing.cpp - one_hot, gather, embedding, scatter as linalg -------===//
//
// Part of Ober-Train. one_hot compares each position along its axis with
// the index (negative indices count from the depth); gather, embedding and
// gather_elements read the input at the index along the axis; scatter_add
// and scatter loop over the indices, adding (or writing) each slice of the
// updates into the slice the index names; scatter_elements_add loops over
// single elements. Negative indices count from the end;
// out-of-range ones are clamped where the interpreter reports an error.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

/// `v` (an integer) as i64.
Value lowering::asI64(OpBuilder &b, Location loc, Value v) {
  return v.getType().isInteger(64)
             ? v
             : Value(arith::ExtSIOp::create(b, loc, b.getI64Type(), v));
}

/// `index` (an integer) as a position along a dimension of `size`:
/// negative ones count from the end, the rest are clamped into range.
Value lowering::indexAlong(OpBuilder &b, Location loc, Value index, int64_t size) {
  auto i64 = [&](int64_t c) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(c));
  };
  Value v = asI64(b, loc, index);
  v = arith::SelectOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, i64(0)),
      arith::AddIOp::create(b, loc, v, i64(size)), v);
  return clampIndex(b, loc,
                    arith::IndexCastOp::create(b, loc, b.getIndexType(), v),
                    size);
}

Value lowering::clampIndex(OpBuilder &b, Location loc, Value index,
                           int64_t size) {
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, index, c(0)), c(size - 1));
}

namespace {

struct OneHotLowering : OpRewritePattern<OneHotOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OneHotOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!result.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t rank = result.getRank(), axis = op.getAxis(),
            depth = op.getDepth();
    Type element = result.getElementType();
    SmallVector<AffineExpr> indexExprs;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        indexExprs.push_back(rewriter.getAffineDimExpr(d));
    Value init = tensor::EmptyOp::create(rewriter, loc, result.getShape(),
                                         element);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{result}, ValueRange{op.getIndices()},
        ValueRange{init},
        {AffineMap::get(rank, 0, indexExprs, getContext()),
         rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange v) {
          Value index = asI64(b, l, v[0]);
          Value zero = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0));
          Value wrapped = arith::SelectOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, index,
                                    zero),
              arith::AddIOp::create(
                  b, l, index,
                  arith::ConstantOp::create(b, l, b.getI64IntegerAttr(depth))),
              index);
          Value at = arith::IndexCastOp::create(
              b, l, b.getI64Type(), linalg::IndexOp::create(b, l, axis));
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, at,
                                            wrapped);
          Value out =
              element.isInteger(1)
                  ? hit
                  : Value(arith::SelectOp::create(
                        b, l, hit, scalarConstant(b, l, element, 1.0),
                        scalarConstant(b, l, element, 0.0)));
          linalg::YieldOp::create(b, l, out);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Each element of `result` reads `input` at its own position with `axis`
/// replaced by the index (negative ones count from the end; out-of-range
/// ones are clamped, where the interpreter reports an error).
Value gatherAlong(OpBuilder &rewriter, Location loc, Value input,
                  Value indices, int64_t axis, RankedTensorType result) {
  auto in = cast<RankedTensorType>(input.getType());
  int64_t rank = result.getRank(),
          ri = cast<RankedTensorType>(indices.getType()).getRank(),
          size = in.getDimSize(axis);
  SmallVector<AffineExpr> indexExprs;
  for (int64_t k = 0; k < ri; ++k)
    indexExprs.push_back(rewriter.getAffineDimExpr(axis + k));
  Value init = tensor::EmptyOp::create(rewriter, loc, result.getShape(),
                                       result.getElementType());
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{result}, ValueRange{indices}, ValueRange{init},
      {AffineMap::get(rank, 0, indexExprs, rewriter.getContext()),
       rewriter.getMultiDimIdentityMap(rank)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location l, ValueRange v) {
        SmallVector<Value> at;
        for (int64_t d = 0; d < axis; ++d)
          at.push_back(linalg::IndexOp::create(b, l, d));
        at.push_back(indexAlong(b, l, v[0], size));
        for (int64_t d = axis + 1; d < in.getRank(); ++d)
          at.push_back(linalg::IndexOp::create(b, l, d - 1 + ri));
        linalg::YieldOp::create(
            b, l, tensor::ExtractOp::create(b, l, input, at).getResult());
      });
  return generic.getResult(0);
}

struct GatherLowering : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!input.hasStaticShape() || !result.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t axis = op.getAxis();
    rewriter.replaceOp(op, gatherAlong(rewriter, op.getLoc(), op.getInput(),
                                       op.getIndices(), axis, result));
    return success();
  }
};

/// An embedding is a gather of rows.
struct EmbeddingLowering : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!op.getTable().getType().hasStaticShape() || !result.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    rewriter.replaceOp(op, gatherAlong(rewriter, op.getLoc(), op.getTable(),
                                       op.getIndices(), 0, result));
    return success();
  }
};

/// scatter_add and scatter: a loop over the indices, each adding (or
/// writing) its slice of the updates into the slice of the result the
/// index names, in index order (a repeated index accumulates, or the last
/// wins).
/// `current` and `update` combined: added (no `combine`), multiplied, or
/// the larger or smaller (NaN wins, as in ober.max/min).
Value combineElements(OpBuilder &b, Location loc,
                      std::optional<ScatterCombine> combine, Value current,
                      Value update) {
  Type type = current.getType();
  if (!isa<FloatType>(type)) {
    if (!combine)
      return arith::AddIOp::create(b, loc, current, update);
    switch (*combine) {
    case ScatterCombine::mul:
      return arith::MulIOp::create(b, loc, current, update);
    case ScatterCombine::max:
      if (type.isInteger(1))
        return arith::OrIOp::create(b, loc, current, update);
      return arith::MaxSIOp::create(b, loc, current, update);
    case ScatterCombine::min:
      if (type.isInteger(1))
        return arith::AndIOp::create(b, loc, current, update);
      return arith::MinSIOp::create(b, loc, current, update);
    case ScatterCombine::replace:
      return update;
    }
  }
  Value x = widen(b, loc, current), u = widen(b, loc, update), r = u;
  if (!combine)
    r = arith::AddFOp::create(b, loc, x, u);
  else if (*combine == ScatterCombine::mul)
    r = arith::MulFOp::create(b, loc, x, u);
  else if (*combine == ScatterCombine::max)
    r = arith::MaximumFOp::create(b, loc, x, u);
  else if (*combine == ScatterCombine::min)
    r = arith::MinimumFOp::create(b, loc, x, u);
  return narrow(b, loc, r, type);
}

template <typename Op> struct ScatterLowering : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto indices = cast<RankedTensorType>(op.getIndices().getType());
    if (!input.hasStaticShape() || !indices.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t rank = input.getRank();
    int64_t axis = op.getAxis();
    int64_t count = indices.getNumElements(), size = input.getDimSize(axis);
    // How an update meets the element it lands on (null: it replaces it).
    std::optional<ScatterCombine> combine;
    if constexpr (std::is_same_v<Op, ScatterOp>) {
      if (op.getCombine() != ScatterCombine::replace)
        combine = op.getCombine();
    }
    // The updates with the index dimensions as one, the indices flat.
    SmallVector<int64_t> flat(input.getShape());
    flat[axis] = count;
    Value updates = reshapeTo(rewriter, loc, op.getUpdates(), flat);
    Value ids = reshapeTo(rewriter, loc, op.getIndices(), {count});
    SmallVector<int64_t> sliceShape(input.getShape());
    sliceShape[axis] = 1;
    auto sliceType = input.clone(sliceShape);
    auto at = [&](OpBuilder &b, Location l, Value source, Value offset,
                  Value dest) -> Value {
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
          sizes, strides(rank, b.getIndexAttr(1));
      for (int64_t s : sliceShape)
        sizes.push_back(b.getIndexAttr(s));
      offsets[axis] = offset;
      if (dest)
        return tensor::InsertSliceOp::create(b, l, source, dest, offsets,
                                             sizes, strides);
      return tensor::ExtractSliceOp::create(b, l, sliceType, source, offsets,
                                            sizes, strides);
    };
    Value lower = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value upper = arith::ConstantIndexOp::create(rewriter, loc, count);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(rewriter, loc, lower, upper, one,
                                   ValueRange{op.getInput()});
    {
      OpBuilder::InsertionGuard guard(rewriter);
      Block *body = loop.getBody();
      if (!body->empty())
        rewriter.eraseOp(body->getTerminator());
      rewriter.setInsertionPointToEnd(body);
      OpBuilder &b = rewriter;
      Value j = loop.getInductionVar(), acc = loop.getRegionIterArgs()[0];
      Value target = indexAlong(
          b, loc, tensor::ExtractOp::create(b, loc, ids, ValueRange{j}), size);
      Value piece = at(b, loc, updates, j, Value());
      if (isa<ScatterAddOp>(op) || combine) {
        Value current = at(b, loc, acc, target, Value());
        piece = mapElements(
            b, loc, sliceType, {current, piece},
            [&](OpBuilder &nb, Location nl, ValueRange v) -> Value {
              return combineElements(nb, nl, combine, v[0], v[1]);
            });
      }
      scf::YieldOp::create(b, loc, at(b, loc, piece, target, acc));
    }
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

/// gather_elements: each position reads the input at itself with `axis`
/// replaced by its index.
struct GatherElementsLowering : OpRewritePattern<GatherElementsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherElementsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!input.hasStaticShape() || !result.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t rank = result.getRank(), axis = op.getAxis();
    Value in = op.getInput();
    Value init = tensor::EmptyOp::create(rewriter, loc, result.getShape(),
                                         result.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{result}, ValueRange{op.getIndices()},
        ValueRange{init},
        {rewriter.getMultiDimIdentityMap(rank),
         rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange v) {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d)
            at.push_back(d == axis
                             ? indexAlong(b, l, v[0], input.getDimSize(axis))
                             : Value(linalg::IndexOp::create(b, l, d)));
          linalg::YieldOp::create(
              b, l, tensor::ExtractOp::create(b, l, in, at).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// scatter_elements_add: a loop over the updates in row-major order, each
/// added at its position with `axis` replaced by its index.
struct ScatterElementsAddLowering : OpRewritePattern<ScatterElementsAddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScatterElementsAddOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto indices = cast<RankedTensorType>(op.getIndices().getType());
    if (!input.hasStaticShape() || !indices.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t rank = input.getRank(), axis = op.getAxis(),
            count = indices.getNumElements();
    Type element = input.getElementType();
    Value ids = reshapeTo(rewriter, loc, op.getIndices(), {count});
    Value updates = reshapeTo(rewriter, loc, op.getUpdates(), {count});
    Value lower = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value upper = arith::ConstantIndexOp::create(rewriter, loc, count);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, lower, upper, one, ValueRange{op.getInput()},
        [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
          // The position of update i: its row-major coordinates in the
          // indices' shape, `axis` replaced by the index.
          SmallVector<Value> at(rank);
          Value rest = i;
          for (int64_t d = rank - 1; d >= 0; --d) {
            Value size = arith::ConstantIndexOp::create(b, l,
                                                        indices.getDimSize(d));
            at[d] = arith::RemUIOp::create(b, l, rest, size);
            rest = arith::DivUIOp::create(b, l, rest, size);
          }
          at[axis] = indexAlong(
              b, l, tensor::ExtractOp::create(b, l, ids, ValueRange{i}),
              input.getDimSize(axis));
          Value acc = carried[0];
          Value current = tensor::ExtractOp::create(b, l, acc, at);
          Value update = tensor::ExtractOp::create(b, l, updates, ValueRange{i});
          Value sum =
              isa<FloatType>(element)
                  ? narrow(b, l,
                           arith::AddFOp::create(b, l, widen(b, l, current),
                                                 widen(b, l, update)),
                           element)
                  : Value(arith::AddIOp::create(b, l, current, update));
          scf::YieldOp::create(
              b, l, tensor::InsertOp::create(b, l, sum, acc, at).getResult());
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

} // namespace

void lowering::populateIndexingPatterns(RewritePatternSet &patterns) {
  patterns.add<OneHotLowering, GatherLowering, EmbeddingLowering,
               ScatterLowering<ScatterAddOp>, ScatterLowering<ScatterOp>,
               GatherElementsLowering, ScatterElementsAddLowering>(
      patterns.getContext());
}
