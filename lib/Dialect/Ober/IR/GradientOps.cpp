//===- GradientOps.cpp - adjoint ops for training -------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ShapeUtils.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::detail;

static RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Checks that `input` and `output_grad` are channels-first with one rank
/// and one element type, and that window attributes have k entries.
static LogicalResult checkPair(const OpDiag &diag, RankedTensorType input,
                               RankedTensorType grad, ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> padding) {
  int64_t k = input.getRank() - 2;
  if (k < 1 || k > 3 || grad.getRank() != input.getRank())
    return diag("input and output_grad must be [N, C, D1..Dk] with 1 to 3 "
                "spatial dimensions, got ",
                shapeString(input.getShape()), " and ",
                shapeString(grad.getShape()));
  if (input.getElementType() != grad.getElementType())
    return diag("input and output_grad element types differ");
  if (failed(checkArraySize(diag, "kernel", kernel, k)) ||
      failed(checkArraySize(diag, "strides", strides, k)) ||
      failed(checkArraySize(diag, "padding", padding, 2 * k)))
    return failure();
  return success();
}

LogicalResult ConvWeightGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType input = tensorOf(adaptor.getInput());
  RankedTensorType grad = tensorOf(adaptor.getOutputGrad());
  if (failed(checkPair(diag, input, grad, adaptor.getKernel(),
                       adaptor.getStrides(), adaptor.getPadding())) ||
      failed(checkArraySize(diag, "dilations", adaptor.getDilations(),
                            input.getRank() - 2)))
    return failure();
  int64_t groups = adaptor.getGroups();
  if (groups < 1 || (!input.isDynamicDim(1) && input.getDimSize(1) % groups))
    return diag("'groups' ", groups, " must divide the input channels ",
                input.getDimSize(1));
  SmallVector<int64_t> shape = {grad.getDimSize(1),
                                input.isDynamicDim(1)
                                    ? ShapedType::kDynamic
                                    : input.getDimSize(1) / groups};
  llvm::append_range(shape, adaptor.getKernel());
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

/// Pooling gradients have the type of the forward input.
static LogicalResult inferPoolGrad(const OpDiag &diag, Value inputValue,
                                   Value gradValue, ArrayRef<int64_t> kernel,
                                   ArrayRef<int64_t> strides,
                                   ArrayRef<int64_t> padding,
                                   SmallVectorImpl<Type> &results) {
  RankedTensorType input = tensorOf(inputValue);
  if (failed(checkPair(diag, input, tensorOf(gradValue), kernel, strides,
                       padding)))
    return failure();
  results.push_back(input);
  return success();
}

LogicalResult MaxPoolGradOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &results) {
  return inferPoolGrad(OpDiag(loc, getOperationName()), adaptor.getInput(),
                       adaptor.getOutputGrad(), adaptor.getKernel(),
                       adaptor.getStrides(), adaptor.getPadding(), results);
}

LogicalResult AvgPoolGradOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &results) {
  return inferPoolGrad(OpDiag(loc, getOperationName()), adaptor.getInput(),
                       adaptor.getOutputGrad(), adaptor.getKernel(),
                       adaptor.getStrides(), adaptor.getPadding(), results);
}

LogicalResult ScatterElementsAddOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType input = tensorOf(adaptor.getInput());
  RankedTensorType indices = tensorOf(adaptor.getIndices());
  RankedTensorType updates = tensorOf(adaptor.getUpdates());
  if (failed(checkAxis(diag, "axis", adaptor.getAxis(), input.getRank())))
    return failure();
  if (indices.getRank() != input.getRank() ||
      !compatibleShapes(indices.getShape(), updates.getShape()))
    return diag("indices and updates must have one shape of the input's rank, "
                "got ",
                shapeString(indices.getShape()), " and ",
                shapeString(updates.getShape()));
  if (updates.getElementType() != input.getElementType())
    return diag("input and updates element types differ");
  results.push_back(input);
  return success();
}

LogicalResult AttentionGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  Value mask = adaptor.getMask();
  RankedTensorType q = tensorOf(adaptor.getQuery());
  FailureOr<RankedTensorType> out = inferAttention(
      diag, q, tensorOf(adaptor.getKey()), tensorOf(adaptor.getValue()),
      mask ? tensorOf(mask) : RankedTensorType(), adaptor.getScaleAttr());
  if (failed(out))
    return failure();
  if (mask && !tensorOf(mask).getElementType().isInteger(1))
    return diag("mask must be i1 (a float mask's gradient is the "
                "decomposition's), got ",
                tensorOf(mask).getElementType());
  for (auto [name, v] : {std::pair("output", adaptor.getOutput()),
                         std::pair("output_grad", adaptor.getOutputGrad())}) {
    RankedTensorType t = tensorOf(v);
    if (t.getElementType() != out->getElementType() ||
        !compatibleShapes(t.getShape(), out->getShape()))
      return diag(name, " must be the attention's result ",
                  shapeString(out->getShape()), " of ", out->getElementType(),
                  ", got ", shapeString(t.getShape()), " of ",
                  t.getElementType());
  }
  results.push_back(q);
  results.push_back(adaptor.getKey().getType());
  results.push_back(adaptor.getValue().getType());
  return success();
}

double AttentionGradOp::getEffectiveScale() {
  return attentionScale(getScale(), getQuery().getType());
}
