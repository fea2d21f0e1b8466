//===- TensorSizes.cpp - element counts and byte sizes that fit -----------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/TensorSizes.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::ober;

std::optional<int64_t> mlir::ober::checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || llvm::MulOverflow(n, d, n))
      return std::nullopt;
  return n;
}

std::optional<int64_t> mlir::ober::checkedSizeInBytes(ShapedType type) {
  if (!type.hasStaticShape())
    return std::nullopt;
  std::optional<int64_t> n = checkedNumElements(type.getShape());
  Type element = type.getElementType();
  int64_t width =
      element.isIntOrFloat()
          ? std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8)
          : 1;
  int64_t bytes;
  if (!n || llvm::MulOverflow(*n, width, bytes))
    return std::nullopt;
  return bytes;
}

static constexpr const char *kTooLarge =
    "has more elements or bytes than 64 bits can count";

/// Why `t` cannot be used (nullopt: it can).
static std::optional<std::string> problemOf(Type t, TensorSizeCheck check) {
  auto shaped = dyn_cast<ShapedType>(t);
  if (!shaped || !shaped.hasStaticShape())
    return std::nullopt;
  if (!checkedSizeInBytes(shaped))
    return std::string(kTooLarge);
  return check ? check(shaped) : std::nullopt;
}

LogicalResult mlir::ober::verifyTensorSizes(Operation *root,
                                            TensorSizeCheck check) {
  WalkResult walk = root->walk([&](Operation *op) {
    if (auto f = dyn_cast<FunctionOpInterface>(op))
      for (auto [i, t] : llvm::enumerate(f.getArgumentTypes())) {
        std::optional<std::string> problem = problemOf(t, check);
        if (!problem)
          continue;
        InFlightDiagnostic diag = f.emitError();
        if (auto p = f.getArgAttrOfType<StringAttr>(i, OberDialect::kParamAttrName))
          diag << "parameter '" << p.getValue() << "' ";
        else if (auto b =
                     f.getArgAttrOfType<StringAttr>(i, OberDialect::kBatchAttrName))
          diag << "input '" << b.getValue() << "' ";
        else
          diag << "argument #" << i << " ";
        diag << "(" << t << ") " << *problem;
        return WalkResult::interrupt();
      }
    for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
      if (std::optional<std::string> problem = problemOf(t, check)) {
        op->emitError() << "result #" << i << " (" << t << ") " << *problem;
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LastUses mlir::ober::lastUsesIn(Block &block) {
  LastUses uses;
  for (Operation &op : block)
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        uses.of[v] = &op;
    });
  for (auto [v, op] : uses.of)
    uses.dyingAt[op].push_back(v);
  return uses;
}
