//===- MergeKernelModules.cpp - one GPU module for every kernel -----------===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CUDA/Passes.h"

namespace mlir::ober {
#define GEN_PASS_DEF_MERGEKERNELMODULESPASS
#include "ober/Target/CUDA/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

struct MergeKernelModules
    : public ober::impl::MergeKernelModulesPassBase<MergeKernelModules> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    if (modules.size() < 2)
      return;
    gpu::GPUModuleOp into = modules.front();
    SymbolTable kernels(into);
    // Where each moved kernel went: (old module, old name) -> new name.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp from : ArrayRef(modules).drop_front()) {
      for (Operation &op : llvm::make_early_inc_range(from.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol)
          continue;
        StringAttr old = symbol.getNameAttr();
        op.remove();
        // Inserting renames on a clash with a kernel already there.
        StringAttr now = kernels.insert(&op);
        renamed[{from.getNameAttr(), old}] = now;
      }
    }
    StringAttr target = into.getNameAttr();
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it = renamed.find(
          {kernel.getRootReference(), kernel.getLeafReference()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          target, {FlatSymbolRefAttr::get(it->second)}));
    });
    for (gpu::GPUModuleOp from : ArrayRef(modules).drop_front())
      from.erase();
  }
};

} // namespace
