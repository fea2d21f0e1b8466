//===- OberBuilders.cpp - small builders shared by ober passes ------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/OberBuilders.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

using namespace mlir;

Value mlir::ober::createScalarConstant(OpBuilder &builder, Location loc,
                                       Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element =
      isa<FloatType>(elementType)
          ? Attribute(builder.getFloatAttr(elementType, value))
          : Attribute(builder.getIntegerAttr(elementType,
                                             static_cast<int64_t>(value)));
  return ConstantOp::create(builder, loc, DenseElementsAttr::get(type, element));
}

LogicalResult mlir::ober::inferResultTypesInPlace(Operation *op) {
  SmallVector<Type> types;
  auto iface = llvm::cast<InferTypeOpInterface>(op);
  if (failed(iface.inferReturnTypes(op->getContext(), op->getLoc(),
                                    op->getOperands(), op->getAttrDictionary(),
                                    op->getPropertiesStorage(),
                                    op->getRegions(), types)) ||
      types.size() != op->getNumResults())
    return failure();
  for (auto [result, type] : llvm::zip(op->getResults(), types))
    result.setType(type);
  return success();
}
