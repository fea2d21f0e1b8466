//===- Shapes.cpp - constants and views of ober as tensor and linalg ------===//
//
// Part of Ober-Train. `constant` becomes `arith.constant`, `reshape` a
// collapse or an expand (through one dimension when the dimensions do not
// group), `transpose` a
// `linalg.transpose`, `broadcast_to` a `linalg.generic` with NumPy rules.
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

} // namespace

void lowering::populateShapePatterns(RewritePatternSet &patterns) {
  patterns.add<ConstantLowering, ReshapeLowering, TransposeLowering,
               BroadcastLowering>(patterns.getContext());
}
