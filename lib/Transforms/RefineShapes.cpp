//===- RefineShapes.cpp - pin dynamic shapes ------------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Transforms/RefineShapes.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace mlir::ober;

/// Fills the dynamic sizes of `result` that its operand determines.
static RankedTensorType resolveReshape(RankedTensorType input,
                                       RankedTensorType result) {
  if (!input.hasStaticShape())
    return result;
  SmallVector<int64_t> shape(result.getShape());
  int64_t known = 1, dynamic = -1;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (ShapedType::isDynamic(d)) {
      if (dynamic >= 0)
        return result; // two unknowns: ambiguous
      dynamic = i;
    } else {
      known *= d;
    }
  }
  if (dynamic >= 0 && known != 0 && input.getNumElements() % known == 0)
    shape[dynamic] = input.getNumElements() / known;
  return result.clone(shape);
}

static RankedTensorType resolveBroadcast(RankedTensorType input,
                                         RankedTensorType result) {
  SmallVector<int64_t> shape(result.getShape());
  int64_t offset = result.getRank() - input.getRank();
  for (int64_t i = 0; i < input.getRank() && offset >= 0; ++i)
    if (ShapedType::isDynamic(shape[offset + i]) && input.getDimSize(i) != 1)
      shape[offset + i] = input.getDimSize(i);
  return result.clone(shape);
}

LogicalResult mlir::ober::refineFunctionShapes(func::FuncOp func,
                                               TypeRange argTypes) {
  if (func.isExternal())
    return func.emitError("cannot refine a function without a body");
  Block &body = func.getBody().front();
  if (argTypes.size() != body.getNumArguments())
    return func.emitError("expected ")
           << body.getNumArguments() << " argument types, got "
           << argTypes.size();
  for (auto [arg, type] : llvm::zip(body.getArguments(), argTypes))
    arg.setType(type);
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      func.setFunctionType(FunctionType::get(
          func.getContext(), argTypes, ret.getOperandTypes()));
      continue;
    }
    SmallVector<Type> inferred;
    if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
      if (failed(infer.inferReturnTypes(
              op.getContext(), op.getLoc(), op.getOperands(),
              op.getAttrDictionary(), op.getPropertiesStorage(),
              op.getRegions(), inferred)))
        return failure();
    } else if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      inferred.push_back(
          resolveReshape(reshape.getInput().getType(), reshape.getType()));
    } else if (auto bcast = dyn_cast<BroadcastToOp>(op)) {
      inferred.push_back(
          resolveBroadcast(bcast.getInput().getType(), bcast.getType()));
    } else if (auto castOp = dyn_cast<CastOp>(op)) {
      inferred.push_back(castOp.getInput().getType().clone(
          castOp.getType().getElementType()));
    } else {
      continue;
    }
    for (auto [result, type] : llvm::zip(op.getResults(), inferred))
      result.setType(type);
  }
  return verify(func);
}
