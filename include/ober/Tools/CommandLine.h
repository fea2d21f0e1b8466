//===- CommandLine.h - the tools' own options in --help ---------*- C++ -*-===//
//
// Part of Ober-Train. LLVM and MLIR register hundreds of options in every
// program that links them (`--x86-*`, `--polly-*`, `--amdgpu-*`); the
// tools' `--help` lists only their own and the import options, and
// `--help-hidden` lists everything.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TOOLS_COMMANDLINE_H
#define OBER_TOOLS_COMMANDLINE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace mlir::ober {

/// The category of the options that say how a model file is imported
/// (`--onnx-dim`, `--input-shape`): listed by every tool that imports.
llvm::cl::OptionCategory &importOptionCategory();

/// Hides (as `cl::Hidden`: `--help-hidden` still lists them) every option
/// registered so far that is in none of `own` and not in the import
/// category; also hides the categories LLVM adds, so that `--help` shows
/// the tool's options and the generic ones (`--help`, `--version`).
void hideForeignOptions(llvm::ArrayRef<const llvm::cl::OptionCategory *> own);

/// The path of the tool `name` in the running tool's folder (the tools run
/// each other: ober-compile for ober-calibrate, ober-import-torchscript for
/// the importing ones).
std::string toolBesideThisOne(llvm::StringRef name);

} // namespace mlir::ober

#endif // OBER_TOOLS_COMMANDLINE_H
