//===- OberBuilders.h - small builders shared by ober passes -----*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_OBERBUILDERS_H
#define OBER_DIALECT_OBER_IR_OBERBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

#include <type_traits>

namespace mlir::ober {

/// A 0-D `ober.constant` of `elementType` (float or integer) holding `value`.
Value createScalarConstant(OpBuilder &builder, Location loc, Type elementType,
                           double value);

/// The result type to build an op that infers its result type with, before
/// that type is known: the first Value argument's type (an f32 scalar
/// tensor without one), for `createInferred`.
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

/// An op of type OpTy built from `args`. One that infers its result type is
/// built with a provisional type and inferred, so that operands a bad model
/// hands it are an error (emitted at the op; `failedInference` is set)
/// rather than an abort.
template <typename OpTy, typename... Args>
OpTy createInferred(OpBuilder &builder, Location loc, bool &failedInference,
                    Args &&...args) {
  if constexpr (OpTy::template hasTrait<InferTypeOpInterface::Trait>()) {
    Type provisional = provisionalResultType(builder, args...);
    auto op = OpTy::create(builder, loc, provisional,
                           std::forward<Args>(args)...);
    failedInference |= failed(inferResultTypesInPlace(op.getOperation()));
    return op;
  } else {
    return OpTy::create(builder, loc, std::forward<Args>(args)...);
  }
}

} // namespace mlir::ober

#endif // OBER_DIALECT_OBER_IR_OBERBUILDERS_H
