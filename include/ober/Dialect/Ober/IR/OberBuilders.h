//===- OberBuilders.h - small builders shared by ober passes -----*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_OBERBUILDERS_H
#define OBER_DIALECT_OBER_IR_OBERBUILDERS_H

#include "mlir/IR/Builders.h"

namespace mlir::ober {

/// A 0-D `ober.constant` of `elementType` (float or integer) holding `value`.
Value createScalarConstant(OpBuilder &builder, Location loc, Type elementType,
                           double value);

} // namespace mlir::ober

#endif // OBER_DIALECT_OBER_IR_OBERBUILDERS_H
