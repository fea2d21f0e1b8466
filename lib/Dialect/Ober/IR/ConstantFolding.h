//===- ConstantFolding.h - folding helpers for ober ops ---------*- C++ -*-===//
//
// Part of Ober-Train. Internal to the dialect library.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_DIALECT_OBER_IR_CONSTANTFOLDING_H
#define OBER_LIB_DIALECT_OBER_IR_CONSTANTFOLDING_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include <optional>

namespace mlir::ober::detail {

/// Constants larger than this are never folded: folding would copy them.
constexpr int64_t kMaxFoldedElements = 1 << 16;

/// True if `attr` is a splat int or float elements attribute equal to `value`.
bool isSplatOf(Attribute attr, double value);

using FloatFn =
    function_ref<std::optional<llvm::APFloat>(const llvm::APFloat &,
                                              const llvm::APFloat &)>;
using IntFn = function_ref<std::optional<llvm::APInt>(const llvm::APInt &,
                                                      const llvm::APInt &)>;

/// Folds an elementwise binary op whose operands are constants that are
/// splats or already have the result's shape. Returns null when it cannot.
Attribute foldBinary(Attribute lhs, Attribute rhs, ShapedType resultType,
                     FloatFn floatFn, IntFn intFn);

/// Folds an elementwise unary op on a constant. Returns null when it cannot.
Attribute foldUnary(Attribute input, ShapedType resultType,
                    function_ref<std::optional<llvm::APFloat>(const llvm::APFloat &)>
                        floatFn,
                    function_ref<std::optional<llvm::APInt>(const llvm::APInt &)>
                        intFn);

/// Converts a constant to `resultType`'s element type with ober.cast
/// semantics. Returns null when a value cannot be converted exactly as
/// defined (NaN or out-of-range float to integer).
Attribute castElements(Attribute input, ShapedType resultType);

} // namespace mlir::ober::detail

#endif // OBER_LIB_DIALECT_OBER_IR_CONSTANTFOLDING_H
