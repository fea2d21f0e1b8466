//===- GradBuilder.h - helpers for gradient rules ---------------*- C++ -*-===//
//
// Part of Ober-Train. Internal to the training library.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_TRAINING_GRADBUILDER_H
#define OBER_LIB_TRAINING_GRADBUILDER_H

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Dialect/Ober/IR/OberShapeBuilder.h"

#include "mlir/IR/Builders.h"

namespace mlir::ober::training {

inline RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Builds ober ops at one location, with the shapes gradients need.
class GradBuilder : public OberShapeBuilder<GradBuilder> {
public:
  GradBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  template <typename OpTy, typename... Args> Value create(Args &&...args) {
    return OpTy::create(b, loc, std::forward<Args>(args)...)->getResult(0);
  }
  template <typename OpTy, typename... Args>
  SmallVector<Value> createMulti(Args &&...args) {
    return SmallVector<Value>(
        OpTy::create(b, loc, std::forward<Args>(args)...)->getResults());
  }

  /// A 0-D constant of `like`'s element type.
  Value scalarLike(Value like, double value) {
    return scalar(typeOf(like).getElementType(), value);
  }
  Value zerosLike(Type type);
  Value sum(Value v, ArrayRef<int64_t> axes, bool keepdims);
  /// Sums `grad` (of a broadcast result) back to `target`'s shape.
  Value unbroadcast(Value grad, Type target);
  /// Re-expands a reduction result over `axes` to `shape`.
  Value expandReduced(Value v, ArrayRef<int64_t> axes, ArrayRef<int64_t> shape);

  OpBuilder &b;
  Location loc;
};

/// The operand gradients of `op` given its result gradients (null where a
/// result has none). Fills `operandGrads` (null where an operand gets none).
/// Fails with an error at `op` when it has no gradient rule.
LogicalResult vjp(GradBuilder &gb, Operation *op, ArrayRef<Value> resultGrads,
                  SmallVectorImpl<Value> &operandGrads);

// One file per op family.
std::optional<LogicalResult> elementwiseVJP(GradBuilder &gb, Operation *op,
                                            ArrayRef<Value> grads,
                                            SmallVectorImpl<Value> &out);
std::optional<LogicalResult> nnVJP(GradBuilder &gb, Operation *op,
                                   ArrayRef<Value> grads,
                                   SmallVectorImpl<Value> &out);
std::optional<LogicalResult> shapeVJP(GradBuilder &gb, Operation *op,
                                      ArrayRef<Value> grads,
                                      SmallVectorImpl<Value> &out);

} // namespace mlir::ober::training

#endif // OBER_LIB_TRAINING_GRADBUILDER_H
