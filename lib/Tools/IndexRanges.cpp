//===- IndexRanges.cpp - the values integer inputs may hold ---------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Tools/IndexRanges.h"

#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Training/TrainStep.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::ober;
namespace rt = ::ober::rt;

namespace {

bool isIntegerTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType().isSignlessInteger() &&
         t.getElementType().getIntOrFloatBitWidth() > 1;
}

/// The element width of an integer tensor `v`, 0 for another.
unsigned bitsOf(Value v) {
  return isIntegerTensor(v) ? getElementTypeOrSelf(v.getType())
                                  .getIntOrFloatBitWidth()
                            : 0;
}

/// Size `d` of `v`'s static shape (negative counts from the end), or -1.
int64_t sizeOf(Value v, int64_t d) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || t.getRank() == 0)
    return -1;
  if (d < 0)
    d += t.getRank();
  if (d < 0 || d >= t.getRank() || t.isDynamicDim(d))
    return -1;
  return t.getDimSize(d);
}

struct Walk {
  std::optional<rt::IndexRange> range;
  DenseSet<Value> seen;
  SymbolTableCollection symbols;

  /// Narrows the range to [low, high) (and `ignored`) for `use`.
  void narrow(int64_t low, int64_t high, std::optional<int64_t> ignored,
              const std::string &use) {
    if (high <= low)
      return;
    if (!range) {
      range = rt::IndexRange{low, high, ignored.has_value(),
                             ignored.value_or(0), use};
      return;
    }
    // The tightest of several readers names the one that binds.
    if (high - low < range->high - range->low)
      range->use = use;
    range->low = std::max(range->low, low);
    range->high = std::min(range->high, high);
    range->hasIgnored = range->hasIgnored && ignored == range->ignored;
  }

  void visit(Value v) {
    if (!isIntegerTensor(v) || !seen.insert(v).second)
      return;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      unsigned n = use.getOperandNumber();
      llvm::TypeSwitch<Operation *>(user)
          .Case([&](CrossEntropyOp op) {
            int64_t c = sizeOf(op.getLogits(), -1);
            if (n == 1 && c > 0)
              narrow(0, c, op.getIgnoreIndex(),
                     "the class targets of a cross-entropy over " +
                         std::to_string(c) + " classes" +
                         (op.getIgnoreIndex() ? "" : " (it ignores none)"));
          })
          .Case([&](EmbeddingOp op) {
            int64_t rows = sizeOf(op.getTable(), 0);
            if (n == 1 && rows > 0)
              narrow(0, rows, std::nullopt,
                     "the rows of an embedding of " + std::to_string(rows) +
                         " rows");
          })
          .Case([&](GatherOp op) {
            int64_t size = sizeOf(op.getInput(), op.getAxis());
            if (n == 1 && size > 0)
              narrow(-size, size, std::nullopt,
                     "the positions of a gather along an axis of " +
                         std::to_string(size));
          })
          .Case([&](func::CallOp call) {
            auto callee =
                symbols.lookupNearestSymbolFrom<func::FuncOp>(call,
                                                              call.getCalleeAttr());
            if (callee && !callee.isExternal() &&
                n < callee.getNumArguments())
              visit(callee.getArgument(n));
          })
          // Ops that carry every element through (a slice does not: the
          // readers of its part say nothing of the rest).
          .Case<ReshapeOp, TransposeOp, BroadcastToOp, ConcatOp,
                tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                tensor::CastOp>([&](Operation *op) { visit(op->getResult(0)); })
          .Case([&](CastOp op) {
            // A narrowing cast wraps values.
            if (bitsOf(op.getResult()) >= bitsOf(op.getOperand()))
              visit(op.getResult());
          });
    }
  }
};

} // namespace

std::optional<rt::IndexRange> mlir::ober::indexRangeOf(Value v) {
  Walk walk;
  walk.visit(v);
  return walk.range;
}

void mlir::ober::describeIndexRanges(func::FuncOp func, bool inference,
                                     rt::Program &program) {
  SmallVector<Value> sources;
  if (inference) {
    for (BlockArgument a : func.getArguments())
      sources.push_back(a);
  } else {
    func::FuncOp loss = lossFunctionOf(func);
    if (!loss || loss.isExternal())
      return;
    // The step's batch inputs are its loss function's data arguments
    // (neither parameters nor the sample offset), in order.
    SmallVector<Value> data;
    for (BlockArgument a : loss.getArguments())
      if (!loss.getArgAttr(a.getArgNumber(), OberDialect::kParamAttrName) &&
          !loss.getArgAttr(a.getArgNumber(),
                           OberDialect::kSampleOffsetAttrName))
        data.push_back(a);
    if (program.argsWith(rt::ArgRole::Batch).size() != data.size())
      return;
    size_t k = 0;
    for (rt::ProgramArg &arg : program.args)
      sources.push_back(arg.role == rt::ArgRole::Batch ? data[k++] : Value());
  }
  for (auto [arg, source] : llvm::zip(program.args, sources)) {
    bool integer = arg.dtype == rt::DType::I64 || arg.dtype == rt::DType::I32;
    if (!source || !integer ||
        (arg.role != rt::ArgRole::Batch && arg.role != rt::ArgRole::Input))
      continue;
    if (std::optional<rt::IndexRange> range = indexRangeOf(source))
      arg.indices = *range;
  }
}
