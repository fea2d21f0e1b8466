//===- ReuseDeadInputs.cpp - elementwise results into an input's tensor ----===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CPU/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CallInterfaces.h"

namespace mlir::ober {
#define GEN_PASS_DEF_REUSEDEADINPUTSPASS
#include "ober/Target/CPU/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

/// Whether `op` reads `v` last: every other reader of `v`, or of a view
/// of it (a reshape or slice shares its buffer), comes before `op` in its
/// block, and none turns it into a buffer or passes it to a call (whose
/// aliases bufferization does not follow); else bufferization would copy
/// the tensor to keep it, or write over it before a reader.
bool readsLast(Operation *op, Value v) {
  Block *block = op->getBlock();
  SmallVector<Value> views = {v};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (Operation *user : view.getUsers()) {
      if (user == op)
        continue;
      if (isa<bufferization::ToBufferOp, CallOpInterface>(user))
        return false;
      Operation *top = block->findAncestorOpInBlock(*user);
      if (!top || !top->isBeforeInBlock(op))
        return false;
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
              tensor::ExtractSliceOp, tensor::CastOp, tensor::ReshapeOp>(user))
        views.push_back(user->getResult(0));
    }
  }
  return true;
}

/// The input of `op` that `init` (an output starting empty) may take: read
/// with the same map, of the same type, by `op` last; not already another
/// output's.
OpOperand *reusableInput(linalg::GenericOp op, OpOperand &init,
                         llvm::SmallPtrSetImpl<Value> &taken) {
  // Each element written once, where it was read: a broadcast output
  // would write over values later iterations still read.
  AffineMap map = op.getMatchingIndexingMap(&init);
  if (!map.isPermutation())
    return nullptr;
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value v = in->get();
    if (v.getType() == init.get().getType() && !taken.contains(v) &&
        op.getMatchingIndexingMap(in) == map && readsLast(op, v))
      return in;
  }
  return nullptr;
}

struct ReuseDeadInputs
    : public ober::impl::ReuseDeadInputsPassBase<ReuseDeadInputs> {
  void runOnOperation() override {
    getOperation().walk([](linalg::GenericOp op) {
      if (!op.hasPureTensorSemantics())
        return;
      llvm::SmallPtrSet<Value, 4> taken;
      for (OpOperand &init : op.getDpsInitsMutable()) {
        if (!init.get().getDefiningOp<tensor::EmptyOp>() ||
            op.payloadUsesValueFromOperand(&init))
          continue;
        if (OpOperand *in = reusableInput(op, init, taken)) {
          taken.insert(in->get());
          init.set(in->get());
        }
      }
    });
  }
};

} // namespace
