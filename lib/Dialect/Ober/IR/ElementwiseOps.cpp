//===- ElementwiseOps.cpp - unary, binary, compare, select, cast ----------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ConstantFolding.h"
#include "ShapeUtils.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::detail;
using llvm::APFloat;
using llvm::APInt;

//===----------------------------------------------------------------------===//
// Broadcasting type inference
//===----------------------------------------------------------------------===//

/// The NumPy broadcast of the shapes of `operands` (named `names`).
static FailureOr<SmallVector<int64_t>>
inferBroadcast(const OpDiag &diag, ArrayRef<Value> operands,
               ArrayRef<StringRef> names) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : operands)
    shapes.push_back(cast<RankedTensorType>(v.getType()).getShape());
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  if (failed(shape)) {
    std::string list;
    for (auto [i, s] : llvm::enumerate(shapes))
      list += (i ? ", " : " ") + names[i].str() + " " + shapeString(s);
    return diag("operands are not broadcast-compatible:", list);
  }
  return shape;
}

static LogicalResult sameElementTypes(const OpDiag &diag, Value a, Value b,
                                      StringRef aName, StringRef bName) {
  Type x = getElementTypeOrSelf(a.getType()), y = getElementTypeOrSelf(b.getType());
  if (x != y)
    return diag(aName, " and ", bName, " element types differ: ", x, " vs ", y);
  return success();
}

template <typename OpTy>
static LogicalResult inferBinary(std::optional<Location> loc, Value lhs,
                                 Value rhs, Type elementType,
                                 SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, OpTy::getOperationName());
  if (failed(sameElementTypes(diag, lhs, rhs, "lhs", "rhs")))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      inferBroadcast(diag, {lhs, rhs}, {"lhs", "rhs"});
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(
      *shape, elementType ? elementType : getElementTypeOrSelf(lhs.getType())));
  return success();
}

#define OBER_BINARY_INFER(OP)                                                  \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc, \
                                     OP::Adaptor adaptor,                      \
                                     SmallVectorImpl<Type> &results) {         \
    return inferBinary<OP>(loc, adaptor.getLhs(), adaptor.getRhs(), Type(),    \
                           results);                                           \
  }
OBER_BINARY_INFER(AddOp)
OBER_BINARY_INFER(SubOp)
OBER_BINARY_INFER(MulOp)
OBER_BINARY_INFER(DivOp)
OBER_BINARY_INFER(PowOp)
OBER_BINARY_INFER(MaxOp)
OBER_BINARY_INFER(MinOp)
OBER_BINARY_INFER(RemOp)
OBER_BINARY_INFER(AndOp)
OBER_BINARY_INFER(OrOp)
OBER_BINARY_INFER(XorOp)
#undef OBER_BINARY_INFER

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  return inferBinary<CompareOp>(loc, adaptor.getLhs(), adaptor.getRhs(),
                                IntegerType::get(context, 1), results);
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  if (failed(sameElementTypes(diag, adaptor.getOnTrue(), adaptor.getOnFalse(),
                              "on_true", "on_false")))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = inferBroadcast(
      diag, {adaptor.getCondition(), adaptor.getOnTrue(), adaptor.getOnFalse()},
      {"condition", "on_true", "on_false"});
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(
      *shape, getElementTypeOrSelf(adaptor.getOnTrue().getType())));
  return success();
}

//===----------------------------------------------------------------------===//
// Folding
//===----------------------------------------------------------------------===//

/// `x op c` -> `x` when `c` is a splat of `identity` and the result has the
/// type of `x` (so no broadcasting happened).
static Value foldRightIdentity(Value lhs, Attribute rhs, Type resultType,
                               double identity) {
  if (lhs.getType() == resultType && isSplatOf(rhs, identity))
    return lhs;
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldRightIdentity(getLhs(), adaptor.getRhs(), getType(), 0.0))
    return v;
  if (Value v = foldRightIdentity(getRhs(), adaptor.getLhs(), getType(), 0.0))
    return v;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a + b;
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a + b;
      });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldRightIdentity(getLhs(), adaptor.getRhs(), getType(), 0.0))
    return v;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a - b;
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a - b;
      });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldRightIdentity(getLhs(), adaptor.getRhs(), getType(), 1.0))
    return v;
  if (Value v = foldRightIdentity(getRhs(), adaptor.getLhs(), getType(), 1.0))
    return v;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a * b;
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a * b;
      });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldRightIdentity(getLhs(), adaptor.getRhs(), getType(), 1.0))
    return v;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a / b;
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        if (b.isZero() || (a.isMinSignedValue() && b.isAllOnes()))
          return std::nullopt;
        return a.sdiv(b);
      });
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return foldUnary(
      adaptor.getInput(), getType(),
      [](const APFloat &a) -> std::optional<APFloat> { return -a; },
      [](const APInt &a) -> std::optional<APInt> { return -a; });
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  if (getOnTrue() == getOnFalse() && getOnTrue().getType() == getType())
    return getOnTrue();
  auto cond = dyn_cast_or_null<DenseElementsAttr>(adaptor.getCondition());
  if (cond && cond.isSplat()) {
    Value chosen = cond.getSplatValue<bool>() ? getOnTrue() : getOnFalse();
    if (chosen.getType() == getType())
      return chosen;
  }
  return {};
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return castElements(adaptor.getInput(), getType());
}
