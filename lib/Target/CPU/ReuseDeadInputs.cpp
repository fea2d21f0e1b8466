//===- ReuseDeadInputs.cpp - elementwise results into an input's tensor ----===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CPU/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::ober {
#define GEN_PASS_DEF_REUSEDEADINPUTSPASS
#include "ober/Target/CPU/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

/// The input of `op` that `init` (an output starting empty) may take: read
/// with the same map, of the same type, preferably read by `op` alone,
/// then a function argument; not already another output's.
OpOperand *reusableInput(linalg::GenericOp op, OpOperand &init,
                         llvm::SmallPtrSetImpl<Value> &taken) {
  AffineMap map = op.getMatchingIndexingMap(&init);
  OpOperand *best = nullptr;
  int bestRank = 0;
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value v = in->get();
    if (v.getType() != init.get().getType() || taken.contains(v) ||
        op.getMatchingIndexingMap(in) != map)
      continue;
    int rank = v.hasOneUse() ? 3 : isa<BlockArgument>(v) ? 2 : 1;
    if (rank > bestRank) {
      best = in;
      bestRank = rank;
    }
  }
  return best;
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
