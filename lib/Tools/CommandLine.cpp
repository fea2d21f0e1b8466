//===- CommandLine.cpp - the tools' own options in --help -----------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Tools/CommandLine.h"

#include "llvm/ADT/STLExtras.h"

namespace cl = llvm::cl;

cl::OptionCategory &mlir::ober::importOptionCategory() {
  static cl::OptionCategory category("Model import options");
  return category;
}

void mlir::ober::hideForeignOptions(
    llvm::ArrayRef<const cl::OptionCategory *> own) {
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.second;
    bool shown = llvm::any_of(option->Categories, [&](cl::OptionCategory *c) {
      // LLVM's --help, --help-list and --version.
      return c == &importOptionCategory() || llvm::is_contained(own, c) ||
             c->getName() == "Generic Options";
    });
    if (!shown && option->getOptionHiddenFlag() == cl::NotHidden)
      option->setHiddenFlag(cl::Hidden);
  }
}
