//===- OberBuilders.h - small builders shared by ober passes -----*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_OBERBUILDERS_H
#define OBER_DIALECT_OBER_IR_OBERBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <type_traits>

namespace mlir::ober {

/// A 0-D `ober.constant` of `elementType` (float or integer) holding `value`.
Value createScalarConstant(OpBuilder &builder, Location loc, Type elementType,
                           double value);

/// The result type to build an op that infers its result type with, before
/// that type is known: the first Value argument's type (an f32 scalar
/// tensor without one). Ops built this way get their real type from
/// `inferResultTypesInPlace`; the ops' own builders would abort the
/// process when inference fails, on operands a bad model hands them.
template <typename... Args>
Type provisionalResultType(OpBuilder &builder, const Args &...args) {
  Type type;
  auto note = [&type](const auto &arg) {
    if constexpr (std::is_convertible_v<decltype(arg), Value>)
      if (!type && Value(arg))
        type = Value(arg).getType();
  };
  (note(args), ...);
  return type ? type : RankedTensorType::get({}, builder.getF32Type());
}

/// Sets `op`'s result types from its InferTypeOpInterface; failure (the
/// interface has emitted why, at the op) when its operands do not fit.
LogicalResult inferResultTypesInPlace(Operation *op);

} // namespace mlir::ober

#endif // OBER_DIALECT_OBER_IR_OBERBUILDERS_H
