//===- LossOps.cpp - cross-entropy and mean squared error -----------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ShapeUtils.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::detail;

/// Per-sample shape for `reduction = none`, scalar otherwise.
static Type lossType(LossReduction reduction, ArrayRef<int64_t> perSample,
                     Type elementType) {
  if (reduction == LossReduction::none)
    return RankedTensorType::get(perSample, elementType);
  return RankedTensorType::get({}, elementType);
}

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  auto logits = cast<RankedTensorType>(adaptor.getLogits().getType());
  auto targets = cast<RankedTensorType>(adaptor.getTargets().getType());
  if (logits.getRank() < 1)
    return diag("logits must have rank >= 1 ([..., classes]), got a scalar");
  double smoothing = adaptor.getLabelSmoothing().convertToDouble();
  if (!(smoothing >= 0.0 && smoothing <= 1.0))
    return diag("'label_smoothing' must be in [0, 1], got ", smoothing);
  ArrayRef<int64_t> samples = logits.getShape().drop_back();
  if (isa<FloatType>(targets.getElementType())) {
    if (targets != logits)
      return diag("probability targets must have the type of the logits ",
                  logits, ", got ", targets);
    if (adaptor.getIgnoreIndexAttr())
      return diag("'ignore_index' needs integer class targets");
  } else {
    if (!targets.getElementType().isInteger(32) &&
        !targets.getElementType().isInteger(64))
      return diag("class targets must be i32 or i64, got ",
                  targets.getElementType());
    if (!compatibleShapes(targets.getShape(), samples))
      return diag("class targets must have shape ", shapeString(samples),
                  " (the logits without the class dimension), got ",
                  shapeString(targets.getShape()));
  }
  results.push_back(lossType(adaptor.getReduction(), samples,
                             logits.getElementType()));
  return success();
}

LogicalResult MSELossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto target = cast<RankedTensorType>(adaptor.getTarget().getType());
  if (input != target)
    return diag("input and target types differ: ", input, " vs ", target);
  results.push_back(lossType(adaptor.getReduction(), input.getShape(),
                             input.getElementType()));
  return success();
}
