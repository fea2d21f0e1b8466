//===- OberBuilders.cpp - small builders shared by ober passes ------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/OberBuilders.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include <cmath>
#include <limits>

using namespace mlir;

Value mlir::ober::createScalarConstant(OpBuilder &builder, Location loc,
                                       Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element;
  if (isa<FloatType>(elementType)) {
    element = builder.getFloatAttr(elementType, value);
  } else {
    // As a cast to the integer type: a boolean is value != 0; other
    // integers saturate (NaN is 0), never converting out of range.
    int64_t v;
    if (elementType.isInteger(1))
      v = value != 0;
    else if (std::isnan(value))
      v = 0;
    else if (value <= -0x1p63)
      v = std::numeric_limits<int64_t>::min();
    else if (value >= 0x1p63)
      v = std::numeric_limits<int64_t>::max();
    else
      v = static_cast<int64_t>(value);
    element = builder.getIntegerAttr(elementType, v);
  }
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
