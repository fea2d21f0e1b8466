//===- Shapes.cpp - constants and views of ober as tensor and linalg ------===//
//
// Part of Ober-Train. `constant` becomes `arith.constant`, `reshape` a
// collapse or an expand (through one dimension when the dimensions do not
// group), `transpose` a `linalg.transpose`, `broadcast_to` a
// `linalg.generic` with NumPy rules, `slice` and `split` extract slices
// (a negative stride reads element by element), `concat` inserts them,
// `iota` writes each element's index, `pad` is `tensor.pad` in constant
// mode and reads mirrored or clamped positions otherwise.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

Value lowering::reshapeTo(OpBuilder &b, Location loc, Value v,
                          ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  auto all = [](int64_t rank) {
    ReassociationIndices r;
    for (int64_t d = 0; d < rank; ++d)
      r.push_back(d);
    return SmallVector<ReassociationIndices>(rank ? 1 : 0, r);
  };
  auto to = RankedTensorType::get(shape, type.getElementType());
  // One collapse or one expand when the dimensions group (rows of a batch
  // merged, a dimension split), else through one dimension.
  if (type.getRank() > 0 && !shape.empty() &&
      type.getRank() != static_cast<int64_t>(shape.size()))
    if (std::optional<SmallVector<ReassociationIndices>> groups =
            getReassociationIndicesForReshape(type, to)) {
      if (type.getRank() > to.getRank())
        return tensor::CollapseShapeOp::create(b, loc, to, v, *groups);
      return tensor::ExpandShapeOp::create(b, loc, to, v, *groups);
    }
  Value flat = v;
  int64_t n = type.getNumElements();
  if (type.getRank() != 1) {
    // A rank-0 tensor is expanded directly (empty reassociation).
    if (type.getRank() == 0) {
      return tensor::ExpandShapeOp::create(b, loc, to, v,
                                           SmallVector<ReassociationIndices>());
    }
    flat = tensor::CollapseShapeOp::create(b, loc, v, all(type.getRank()));
  }
  if (shape.empty())
    return tensor::CollapseShapeOp::create(b, loc, to, flat,
                                           SmallVector<ReassociationIndices>());
  if (shape.size() == 1 && shape[0] == n)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, to, flat, all(shape.size()));
}

Value lowering::filled(OpBuilder &b, Location loc, RankedTensorType type,
                       Value value) {
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  return linalg::FillOp::create(b, loc, value, empty).getResult(0);
}

Value lowering::zeros(OpBuilder &b, Location loc, RankedTensorType type) {
  return filled(b, loc, type, scalarConstant(b, loc, type.getElementType(), 0.0));
}

namespace {

struct ConstantLowering : OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOp op,
                                PatternRewriter &rewriter) const override {
    auto value = dyn_cast<TypedAttr>(op.getValue());
    if (!value || !isa<RankedTensorType>(value.getType()))
      return failure();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

struct ReshapeLowering : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getResult().getType();
    if (!type.hasStaticShape() || !op.getInput().getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    rewriter.replaceOp(op, reshapeTo(rewriter, op.getLoc(), op.getInput(),
                                     type.getShape()));
    return success();
  }
};

struct TransposeLowering : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getResult().getType();
    Value init = tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(),
                                         type.getElementType());
    auto t = linalg::TransposeOp::create(rewriter, op.getLoc(), op.getInput(),
                                         init, op.getPermutation());
    rewriter.replaceOp(op, t.getResult());
    return success();
  }
};

struct BroadcastLowering : OpRewritePattern<BroadcastToOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastToOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    rewriter.replaceOp(
        op, mapElements(rewriter, op.getLoc(), type, op->getOperand(0),
                        [](OpBuilder &, Location, ValueRange args) {
                          return args[0];
                        }));
    return success();
  }
};

/// A slice with positive strides is a tensor.extract_slice; with a negative
/// stride each element reads `start + i * stride`.
struct SliceLowering : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!result.hasStaticShape() || !op.getInput().getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    ArrayRef<int64_t> starts = op.getStarts(), strides = op.getStrides();
    Location loc = op.getLoc();
    if (llvm::all_of(strides, [](int64_t s) { return s > 0; })) {
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          op, result, op.getInput(), ValueRange{}, ValueRange{}, ValueRange{},
          starts, result.getShape(), strides);
      return success();
    }
    Value source = op.getInput();
    int64_t rank = result.getRank();
    Value init = tensor::EmptyOp::create(rewriter, loc, result.getShape(),
                                         result.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{result}, ValueRange{}, ValueRange{init},
        {rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(b, l, d);
            Value scaled = arith::MulIOp::create(
                b, l, i, arith::ConstantIndexOp::create(b, l, strides[d]));
            at.push_back(arith::AddIOp::create(
                b, l, scaled, arith::ConstantIndexOp::create(b, l, starts[d])));
          }
          linalg::YieldOp::create(
              b, l, tensor::ExtractOp::create(b, l, source, at).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Offsets, sizes and unit strides of the block of `shape` that starts at
/// `offset` along `axis` and is `size` long there.
struct SliceBlock {
  SmallVector<int64_t> offsets, sizes, strides;
  SliceBlock(ArrayRef<int64_t> shape, int64_t axis, int64_t offset,
             int64_t size)
      : offsets(shape.size(), 0), sizes(shape), strides(shape.size(), 1) {
    offsets[axis] = offset;
    sizes[axis] = size;
  }
};

struct SplitLowering : OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitOp op,
                                PatternRewriter &rewriter) const override {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    if (!input.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t axis = op.getAxis();
    SmallVector<Value> pieces;
    int64_t offset = 0;
    for (auto [r, size] : llvm::zip(op.getResults(), op.getSizes())) {
      SliceBlock block(input.getShape(), axis, offset, size);
      pieces.push_back(tensor::ExtractSliceOp::create(
          rewriter, op.getLoc(), cast<RankedTensorType>(r.getType()),
          op.getInput(), ValueRange{}, ValueRange{}, ValueRange{},
          block.offsets, block.sizes, block.strides));
      offset += size;
    }
    rewriter.replaceOp(op, pieces);
    return success();
  }
};

struct ConcatLowering : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!result.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t axis = op.getAxis();
    Value out = tensor::EmptyOp::create(rewriter, op.getLoc(),
                                        result.getShape(),
                                        result.getElementType());
    int64_t offset = 0;
    for (Value in : op.getInputs()) {
      auto type = cast<RankedTensorType>(in.getType());
      SliceBlock block(type.getShape(), axis, offset, type.getDimSize(axis));
      block.offsets.resize(result.getRank(), 0);
      out = tensor::InsertSliceOp::create(rewriter, op.getLoc(), in, out,
                                          ValueRange{}, ValueRange{},
                                          ValueRange{}, block.offsets,
                                          block.sizes, block.strides);
      offset += type.getDimSize(axis);
    }
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct IotaLowering : OpRewritePattern<IotaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IotaOp op,
                                PatternRewriter &rewriter) const override {
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!result.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Type element = result.getElementType();
    int64_t rank = result.getRank();
    Value init = tensor::EmptyOp::create(rewriter, op.getLoc(),
                                         result.getShape(), element);
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), TypeRange{result}, ValueRange{},
        ValueRange{init}, {rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          Value i = arith::IndexCastOp::create(
              b, l, b.getI64Type(),
              linalg::IndexOp::create(b, l, op.getDimension()));
          Value v;
          if (isa<FloatType>(element))
            v = arith::SIToFPOp::create(b, l, element, i);
          else if (element.isInteger(64))
            v = i;
          else
            v = arith::TruncIOp::create(b, l, element, i);
          linalg::YieldOp::create(b, l, v);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

Value lowering::padWith(OpBuilder &b, Location loc, Value v,
                        ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                        Value value) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> lo, hi;
  for (size_t i = 0; i < shape.size(); ++i) {
    shape[i] += low[i] + high[i];
    lo.push_back(b.getIndexAttr(low[i]));
    hi.push_back(b.getIndexAttr(high[i]));
  }
  return tensor::PadOp::create(b, loc, type.clone(shape), v, lo, hi, value);
}

/// pad: `tensor.pad` with the value in constant mode; otherwise each
/// position reads the input at the mirrored (`reflect`, without repeating
/// the edge) or clamped (`edge`) position.
struct PadLowering : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto in = cast<RankedTensorType>(op.getInput().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!in.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Type element = in.getElementType();
    ArrayRef<int64_t> low = op.getLow();
    if (op.getMode() == PadMode::constant) {
      double value = op.getValue().convertToDouble();
      if (element.isInteger(1))
        value = value != 0;
      rewriter.replaceOp(op, padWith(rewriter, loc, op.getInput(), low,
                                     op.getHigh(),
                                     scalarConstant(rewriter, loc, element,
                                                    value)));
      return success();
    }
    bool reflect = op.getMode() == PadMode::reflect;
    Value input = op.getInput();
    Value init = tensor::EmptyOp::create(rewriter, loc, result.getShape(),
                                         element);
    int64_t rank = result.getRank();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{result}, ValueRange{}, ValueRange{init},
        {rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            int64_t size = in.getDimSize(d);
            auto c = [&](int64_t v) {
              return arith::ConstantIndexOp::create(b, l, v);
            };
            Value i = arith::SubIOp::create(
                b, l, linalg::IndexOp::create(b, l, d), c(low[d]));
            if (reflect) {
              // -i before the start, 2 (size - 1) - i after the end.
              Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                                i, c(0));
              i = arith::SelectOp::create(b, l, neg,
                                          arith::SubIOp::create(b, l, c(0), i),
                                          i);
              Value past = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::sge, i, c(size));
              i = arith::SelectOp::create(
                  b, l, past,
                  arith::SubIOp::create(b, l, c(2 * (size - 1)), i), i);
            }
            at.push_back(clampIndex(b, l, i, size));
          }
          linalg::YieldOp::create(
              b, l, tensor::ExtractOp::create(b, l, input, at).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

void lowering::populateShapePatterns(RewritePatternSet &patterns) {
  patterns.add<ConstantLowering, ReshapeLowering, TransposeLowering,
               BroadcastLowering, SliceLowering, SplitLowering, ConcatLowering,
               IotaLowering, PadLowering>(patterns.getContext());
}
