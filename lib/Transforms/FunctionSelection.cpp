//===- FunctionSelection.cpp - which function a tool or pass works on -----===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Transforms/FunctionSelection.h"

using namespace mlir;

func::FuncOp mlir::ober::selectFunction(ModuleOp module, StringRef name,
                                        StringRef how) {
  if (!name.empty()) {
    if (auto f = module.lookupSymbol<func::FuncOp>(name))
      return f;
    emitError(module.getLoc()) << "no function @" << name << " in the module";
    return nullptr;
  }
  SmallVector<func::FuncOp> candidates;
  for (auto f : module.getOps<func::FuncOp>())
    if (f.isPublic() && !f.isExternal())
      candidates.push_back(f);
  if (candidates.size() == 1)
    return candidates.front();
  InFlightDiagnostic diag = emitError(module.getLoc());
  if (candidates.empty())
    diag << "the module has no public function with a body";
  else
    diag << "the module has " << candidates.size()
         << " public functions: pick one with " << how;
  return nullptr;
}
