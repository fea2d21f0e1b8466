//===- Diagnostics.h - how the tools print diagnostics ----------*- C++ -*-===//
//
// Part of Ober-Train. MLIR's source-manager handler quotes the source line
// of each location: for a function parsed from a file that line is the
// whole signature (tens of kilobytes for a model's train step). The tools
// print `file:line:col: error: message` and the notes, no source lines.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TOOLS_DIAGNOSTICS_H
#define OBER_TOOLS_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::ober {

/// Prints the context's diagnostics to `os` while it lives.
class ToolDiagnosticHandler : public ScopedDiagnosticHandler {
public:
  explicit ToolDiagnosticHandler(MLIRContext *context,
                                 llvm::raw_ostream &os = llvm::errs());
};

} // namespace mlir::ober

#endif // OBER_TOOLS_DIAGNOSTICS_H
