//===- FreeAtLastUse.cpp - free each buffer after its last use -------------===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ober {
#define GEN_PASS_DEF_FREEATLASTUSEPASS
#include "ober/Target/CPU/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

/// The last op of `dealloc`'s block that uses its buffer or anything that
/// may alias it (nullptr when none does and the buffer comes from outside
/// the block); failure when a use escapes the block's reach (a terminator,
/// or an op outside the block).
FailureOr<Operation *> lastUse(memref::DeallocOp dealloc) {
  Block *block = dealloc->getBlock();
  llvm::SetVector<Value> aliases;
  aliases.insert(dealloc.getMemref());
  Operation *last = dealloc.getMemref().getDefiningOp();
  if (last && last->getBlock() != block)
    last = nullptr;
  for (size_t i = 0; i < aliases.size(); ++i) {
    for (OpOperand &use : aliases[i].getUses()) {
      Operation *user = use.getOwner();
      if (user == dealloc)
        continue;
      Operation *top = block->findAncestorOpInBlock(*user);
      if (!top || top->hasTrait<OpTrait::IsTerminator>())
        return failure();
      // Results of the user, and of every op between it and the block,
      // may be views of the buffer.
      for (Operation *op = user; op; op = op == top ? nullptr
                                                    : op->getParentOp())
        for (Value r : op->getResults())
          if (isa<BaseMemRefType>(r.getType()))
            aliases.insert(r);
      if (!last || last->isBeforeInBlock(top))
        last = top;
    }
  }
  return last;
}

struct FreeAtLastUse : public ober::impl::FreeAtLastUsePassBase<FreeAtLastUse> {
  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk([&](memref::DeallocOp d) { deallocs.push_back(d); });
    for (memref::DeallocOp d : deallocs) {
      FailureOr<Operation *> last = lastUse(d);
      if (failed(last))
        continue;
      if (!*last)
        d->moveBefore(&d->getBlock()->front());
      else if ((*last)->isBeforeInBlock(d))
        d->moveAfter(*last);
    }
  }
};

} // namespace
