//===- ShapeUtils.h - shape helpers for ober op verification ----*- C++ -*-===//
//
// Part of Ober-Train. Internal to the dialect library.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_DIALECT_OBER_IR_SHAPEUTILS_H
#define OBER_LIB_DIALECT_OBER_IR_SHAPEUTILS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include <optional>
#include <string>

namespace mlir::ober::detail {

/// Renders a shape as `4x?x8` (`scalar` for rank 0).
std::string shapeString(ArrayRef<int64_t> shape);

/// Renders integers as `[1, 2, 3]`.
std::string listString(ArrayRef<int64_t> values);

/// Emits errors from type inference, prefixed like Operation::emitOpError so
/// that inference and verification read alike. Silent when there is no
/// location (speculative inference).
class OpDiag {
public:
  OpDiag(std::optional<Location> loc, StringRef opName)
      : loc(loc), opName(opName) {}
  template <typename... Args> LogicalResult operator()(Args &&...args) const {
    return emitOptionalError(loc, "'", opName, "' op ",
                             std::forward<Args>(args)...);
  }

private:
  std::optional<Location> loc;
  StringRef opName;
};

/// NumPy broadcasting of several shapes; dynamic sizes broadcast with 1 to
/// dynamic and with a static size other than 1 to that size.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes);

/// Checks that `axis` is in [0, rank).
LogicalResult checkAxis(const OpDiag &diag, StringRef attrName, int64_t axis,
                        int64_t rank);

/// Checks that `values` has `size` entries.
LogicalResult checkArraySize(const OpDiag &diag, StringRef attrName,
                             ArrayRef<int64_t> values, size_t size);

/// True if two sizes may be equal (either is dynamic, or both are equal).
inline bool compatibleSize(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// True if two shapes have the same rank and compatible sizes.
bool compatibleShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b);

/// The number of elements: nullopt when a size is dynamic, or when the
/// count of the static sizes passes 64 bits (then `*overflow` is set, if
/// given).
std::optional<int64_t> staticElementCount(ArrayRef<int64_t> shape,
                                          bool *overflow = nullptr);

/// The result type of `ober.attention` (and the output of
/// `ober.attention_grad`) over `query`, `key`, `value` and `mask` (null:
/// none) with `scale` (null: 1/sqrt(D)); failure after an error through
/// `diag`.
FailureOr<RankedTensorType> inferAttention(const OpDiag &diag,
                                           RankedTensorType query,
                                           RankedTensorType key,
                                           RankedTensorType value,
                                           RankedTensorType mask,
                                           FloatAttr scale);

/// `scale`'s value, or 1/sqrt(`query`'s head size).
double attentionScale(std::optional<APFloat> scale, RankedTensorType query);

} // namespace mlir::ober::detail

#endif // OBER_LIB_DIALECT_OBER_IR_SHAPEUTILS_H
