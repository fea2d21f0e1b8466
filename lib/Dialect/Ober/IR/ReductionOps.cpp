//===- ReductionOps.cpp - reductions, softmax, log_softmax ----------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ShapeUtils.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::detail;

/// Result type of reducing `input` over `axes`.
static LogicalResult inferReduce(const OpDiag &diag, Value input,
                                 ArrayRef<int64_t> axes, bool keepdims,
                                 SmallVectorImpl<Type> &results) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (failed(checkAxis(diag, "axes", axis, rank)))
      return failure();
    if (i > 0 && axes[i - 1] >= axis)
      return diag("'axes' must be strictly increasing, got ",
                  listString(axes));
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(type.getDimSize(d));
    else if (keepdims)
      shape.push_back(1);
  }
  results.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

#define OBER_REDUCE_OP(OP)                                                     \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &results) {         \
    return inferReduce(OpDiag(loc, getOperationName()), adaptor.getInput(),    \
                       adaptor.getAxes(), adaptor.getKeepdims(), results);     \
  }                                                                            \
  OpFoldResult OP::fold(FoldAdaptor) {                                         \
    if (getAxes().empty() && getInput().getType() == getType())                \
      return getInput();                                                       \
    return {};                                                                 \
  }
OBER_REDUCE_OP(ReduceSumOp)
OBER_REDUCE_OP(ReduceMeanOp)
OBER_REDUCE_OP(ReduceMaxOp)
OBER_REDUCE_OP(ReduceMinOp)
OBER_REDUCE_OP(ReduceProdOp)
#undef OBER_REDUCE_OP

LogicalResult SoftmaxOp::verify() {
  return checkAxis(OpDiag(getLoc(), getOperationName()), "axis", getAxis(),
                   getType().getRank());
}

LogicalResult LogSoftmaxOp::verify() {
  return checkAxis(OpDiag(getLoc(), getOperationName()), "axis", getAxis(),
                   getType().getRank());
}

static LogicalResult inferArgReduce(const OpDiag &diag, Value input,
                                    int64_t axis, bool keepdims,
                                    SmallVectorImpl<Type> &results) {
  auto type = cast<RankedTensorType>(input.getType());
  if (failed(checkAxis(diag, "axis", axis, type.getRank())))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d != axis)
      shape.push_back(type.getDimSize(d));
    else if (keepdims)
      shape.push_back(1);
  }
  results.push_back(
      RankedTensorType::get(shape, IntegerType::get(input.getContext(), 64)));
  return success();
}

LogicalResult ArgMaxOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  return inferArgReduce(OpDiag(loc, getOperationName()), adaptor.getInput(),
                        adaptor.getAxis(), adaptor.getKeepdims(), results);
}

LogicalResult ArgMinOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  return inferArgReduce(OpDiag(loc, getOperationName()), adaptor.getInput(),
                        adaptor.getAxis(), adaptor.getKeepdims(), results);
}

LogicalResult CumSumOp::verify() {
  return checkAxis(OpDiag(getLoc(), getOperationName()), "axis", getAxis(),
                   getType().getRank());
}
