//===- TensorSizes.h - element counts and byte sizes that fit -----*- C++ -*-===//
//
// Part of Ober-Train. A builtin tensor type may have dimensions whose
// product overflows 64 bits (`tensor<8x4611686018427387904xf32>`), which
// `getNumElements` silently wraps. Every pass that counts elements or bytes
// checks the module with `verifyTensorSizes` first.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_TENSORSIZES_H
#define OBER_DIALECT_OBER_IR_TENSORSIZES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

namespace mlir::ober {

/// How a user pins a dimension a model leaves open (`?`), for errors that
/// need static shapes.
inline constexpr const char *kOpenDimensionHint =
    "give open dimensions a size: --onnx-dim=NAME=SIZE for an ONNX model's "
    "symbolic ones, --input-shape for a TorchScript file";

/// The elements of a static shape, nullopt when the count overflows int64.
std::optional<int64_t> checkedNumElements(ArrayRef<int64_t> shape);

/// The bytes of `type` (static shape; i1 counts one byte, other element
/// types their width), nullopt when the count or the size overflows int64.
std::optional<int64_t> checkedSizeInBytes(ShapedType type);

/// Why a tensor of a type (static shape, a size that fits 64 bits) cannot
/// be used; nullopt when it can.
using TensorSizeCheck =
    llvm::function_ref<std::optional<std::string>(ShapedType)>;

/// Every statically shaped tensor under `root` (function arguments and op
/// results) has an element count and byte size that fit 64 bits, and passes
/// `check` when given; otherwise an error at the op (or, for an argument,
/// at its function, naming the parameter or input) and failure.
LogicalResult verifyTensorSizes(Operation *root, TensorSizeCheck check = {});

/// For memory accounting (the interpreter's, the memory model's): the op
/// of `block` that reads each value last (itself or an op in its regions,
/// so a value a loop's body reads lives until the loop ends), and the
/// values each op so reads last.
struct LastUses {
  DenseMap<Value, Operation *> of;
  DenseMap<Operation *, SmallVector<Value>> dyingAt;
};
LastUses lastUsesIn(Block &block);

} // namespace mlir::ober

#endif // OBER_DIALECT_OBER_IR_TENSORSIZES_H
