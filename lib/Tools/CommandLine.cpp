//===- CommandLine.cpp - the tools' own options in --help -----------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Tools/CommandLine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

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

std::string mlir::ober::toolBesideThisOne(llvm::StringRef name) {
  static int anchor;
  llvm::SmallString<256> path(llvm::sys::path::parent_path(
      llvm::sys::fs::getMainExecutable(nullptr, &anchor)));
  llvm::sys::path::append(path, name);
  return path.str().str();
}
