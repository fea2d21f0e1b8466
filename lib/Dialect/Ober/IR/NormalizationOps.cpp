//===- NormalizationOps.cpp - layer, rms and batch normalisation ----------===//
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

static LogicalResult checkEpsilon(const OpDiag &diag, double epsilon) {
  if (!(epsilon >= 0.0))
    return diag("'epsilon' must be non-negative, got ", epsilon);
  return success();
}

/// An optional affine operand of a normalisation over `[axis, rank)`.
static LogicalResult checkAffine(const OpDiag &diag, StringRef name,
                                 Value affine, RankedTensorType input,
                                 int64_t axis) {
  if (!affine)
    return success();
  RankedTensorType type = tensorOf(affine);
  ArrayRef<int64_t> normalized = input.getShape().drop_front(axis);
  if (type.getElementType() != input.getElementType() ||
      !compatibleShapes(type.getShape(), normalized))
    return diag(name, " must be ", shapeString(normalized), "x",
                input.getElementType(),
                " (the normalised dimensions), got ", type);
  return success();
}

/// Normalisation over `[axis, rank)` with optional affine operands.
static LogicalResult inferTrailingNorm(const OpDiag &diag, Value inputValue,
                                       int64_t axis, double epsilon,
                                       Value scale, Value bias,
                                       SmallVectorImpl<Type> &results) {
  RankedTensorType input = tensorOf(inputValue);
  if (failed(checkAxis(diag, "axis", axis, input.getRank())) ||
      failed(checkEpsilon(diag, epsilon)) ||
      failed(checkAffine(diag, "scale", scale, input, axis)) ||
      failed(checkAffine(diag, "bias", bias, input, axis)))
    return failure();
  results.push_back(input);
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferTrailingNorm(OpDiag(loc, getOperationName()), adaptor.getInput(),
                           adaptor.getAxis(),
                           adaptor.getEpsilon().convertToDouble(),
                           adaptor.getScale(), adaptor.getBias(), results);
}

LogicalResult RMSNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  return inferTrailingNorm(OpDiag(loc, getOperationName()), adaptor.getInput(),
                           adaptor.getAxis(),
                           adaptor.getEpsilon().convertToDouble(),
                           adaptor.getScale(), Value(), results);
}

/// Batch norm operands: input [N, C, ...] and per-channel vectors [C].
static LogicalResult checkBatchNorm(const OpDiag &diag, RankedTensorType input,
                                    ArrayRef<std::pair<StringRef, Value>> vectors,
                                    double epsilon) {
  if (input.getRank() < 2)
    return diag("input must be [N, C, ...] with rank >= 2, got ",
                shapeString(input.getShape()));
  if (failed(checkEpsilon(diag, epsilon)))
    return failure();
  int64_t channels = input.getDimSize(1);
  for (auto [name, value] : vectors) {
    RankedTensorType type = tensorOf(value);
    if (type.getRank() != 1 || !compatibleSize(type.getDimSize(0), channels) ||
        type.getElementType() != input.getElementType())
      return diag(name, " must be ", shapeString({channels}), "x",
                  input.getElementType(), " (one per channel), got ", type);
  }
  return success();
}

LogicalResult BatchNormInferenceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  RankedTensorType input = tensorOf(adaptor.getInput());
  if (failed(checkBatchNorm(OpDiag(loc, getOperationName()), input,
                            {{"scale", adaptor.getScale()},
                             {"bias", adaptor.getBias()},
                             {"mean", adaptor.getMean()},
                             {"variance", adaptor.getVariance()}},
                            adaptor.getEpsilon().convertToDouble())))
    return failure();
  results.push_back(input);
  return success();
}

LogicalResult BatchNormTrainingOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType input = tensorOf(adaptor.getInput());
  if (failed(checkBatchNorm(diag, input,
                            {{"scale", adaptor.getScale()},
                             {"bias", adaptor.getBias()},
                             {"running_mean", adaptor.getRunningMean()},
                             {"running_var", adaptor.getRunningVar()}},
                            adaptor.getEpsilon().convertToDouble())))
    return failure();
  double momentum = adaptor.getMomentum().convertToDouble();
  if (!(momentum >= 0.0 && momentum <= 1.0))
    return diag("'momentum' must be in [0, 1], got ", momentum);
  results.push_back(input);
  results.push_back(adaptor.getRunningMean().getType());
  results.push_back(adaptor.getRunningVar().getType());
  return success();
}
