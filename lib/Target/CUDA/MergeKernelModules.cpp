//===- MergeKernelModules.cpp - one GPU module for every kernel -----------===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CUDA/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::ober {
#define GEN_PASS_DEF_MERGEKERNELMODULESPASS
#include "ober/Target/CUDA/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

/// `kernel` as text without its name: equal for kernels that differ only
/// in name (its body never names itself). Empty for a kernel that names
/// other symbols (their definitions could differ between modules) or a
/// function that is not a kernel: those are never merged.
std::string kernelText(gpu::GPUFuncOp kernel) {
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(kernel);
  if (!kernel.isKernel() || !uses || !uses->empty())
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel->print(os, OpPrintingFlags().useLocalScope());
  std::string name = "@" + kernel.getName().str() + "(";
  if (size_t at = text.find(name); at != std::string::npos)
    text.erase(at + 1, name.size() - 2);
  return text;
}

/// `name` as a PTX identifier: letters, digits, `_` and `$`, not starting
/// with a digit (a pipeline stage's function, `step.stage1`, names its
/// kernels `step.stage1_kernel`, which ptxas refuses).
std::string ptxIdentifier(StringRef name) {
  std::string id;
  for (char c : name)
    id += llvm::isAlnum(c) || c == '_' || c == '$' ? c : '_';
  if (id.empty() || llvm::isDigit(id.front()))
    id.insert(id.begin(), '_');
  return id;
}

struct MergeKernelModules
    : public ober::impl::MergeKernelModulesPassBase<MergeKernelModules> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    if (modules.empty())
      return;
    gpu::GPUModuleOp into = modules.front();
    SymbolTable kernels(into);
    // Where each kernel went: (old module, old name) -> new name.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    // The kept kernel of each text.
    llvm::StringMap<StringAttr> kept;
    for (gpu::GPUModuleOp from : modules) {
      SmallVector<Operation *> moved;
      SmallVector<std::pair<StringAttr, StringAttr>> renames;
      for (Operation &op :
           llvm::make_early_inc_range(from.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol)
          continue;
        StringAttr old = symbol.getNameAttr();
        auto kernel = dyn_cast<gpu::GPUFuncOp>(op);
        std::string text = kernel ? kernelText(kernel) : "";
        if (auto same = kept.find(text); !text.empty() && same != kept.end()) {
          renamed[{from.getNameAttr(), old}] = same->second;
          if (from == into)
            kernels.erase(&op);
          else
            op.erase();
          continue;
        }
        StringAttr now = old;
        if (from != into) {
          op.remove();
          // Inserting renames on a clash with a symbol already there.
          now = kernels.insert(&op);
          renamed[{from.getNameAttr(), old}] = now;
          moved.push_back(&op);
          if (now != old)
            renames.push_back({old, now});
        }
        if (!text.empty())
          kept[text] = now;
      }
      // What the moved ops named in their module follows its renaming.
      for (auto [old, now] : renames)
        for (Operation *op : moved)
          if (failed(SymbolTable::replaceAllSymbolUses(old, now, op)))
            return signalPassFailure();
    }
    StringAttr target = into.getNameAttr();
    // Names PTX cannot spell, renamed within the module and at launches.
    for (Operation &op : llvm::make_early_inc_range(into.getBody()->getOperations())) {
      auto symbol = dyn_cast<SymbolOpInterface>(op);
      if (!symbol)
        continue;
      StringAttr old = symbol.getNameAttr();
      std::string id = ptxIdentifier(old.getValue());
      if (id == old.getValue())
        continue;
      std::string unique = id;
      for (int n = 1; kernels.lookup(unique); ++n)
        unique = id + "_" + std::to_string(n);
      StringAttr now = StringAttr::get(module.getContext(), unique);
      if (failed(kernels.rename(&op, now)))
        return signalPassFailure();
      for (auto &entry : renamed)
        if (entry.second == old)
          entry.second = now;
      renamed.try_emplace({target, old}, now);
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it =
          renamed.find({kernel.getRootReference(), kernel.getLeafReference()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(
          SymbolRefAttr::get(target, {FlatSymbolRefAttr::get(it->second)}));
    });
    for (gpu::GPUModuleOp from : ArrayRef(modules).drop_front())
      from.erase();
  }
};

} // namespace
