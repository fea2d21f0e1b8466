//===- ReturnInPlace.cpp - drop results written into their arguments -------===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CPU/Passes.h"
#include "ober/Target/CPU/Pipeline.h"

#include "llvm/ADT/BitVector.h"

namespace mlir::ober {
#define GEN_PASS_DEF_RETURNINPLACEPASS
#include "ober/Target/CPU/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

struct ReturnInPlace : public ober::impl::ReturnInPlacePassBase<ReturnInPlace> {
  void runOnOperation() override {
    for (auto f : getOperation().getOps<func::FuncOp>()) {
      if (!f.isPublic() || f.isExternal() || !f.getBody().hasOneBlock())
        continue;
      auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
      llvm::BitVector drop(ret.getNumOperands());
      SmallVector<Attribute> pairs;
      Builder b(f.getContext());
      for (auto [r, v] : llvm::enumerate(ret.getOperands())) {
        auto arg = dyn_cast<BlockArgument>(v);
        if (!arg || !isa<BaseMemRefType>(v.getType()) ||
            arg.getOwner()->getParentOp() != f)
          continue;
        drop.set(r);
        pairs.push_back(b.getDenseI64ArrayAttr(
            {static_cast<int64_t>(r), arg.getArgNumber()}));
      }
      if (drop.none())
        continue;
      ret->eraseOperands(drop);
      if (failed(f.eraseResults(drop)))
        return signalPassFailure();
      f->setAttr(ober::kResultsInPlaceAttrName, b.getArrayAttr(pairs));
    }
  }
};

} // namespace
