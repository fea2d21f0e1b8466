//===- Diagnostics.cpp - how the tools print diagnostics ------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Tools/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

using namespace mlir;
using namespace mlir::ober;

/// `file:line:col: ` of the first file position in `loc` (a name, a call
/// site or a fused location holds one), or nothing.
static void printPosition(llvm::raw_ostream &os, Location loc) {
  FileLineColLoc position;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      position = file;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (!position)
    return;
  os << position.getFilename().getValue() << ':' << position.getLine() << ':'
     << position.getColumn() << ": ";
}

static StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

static void print(llvm::raw_ostream &os, Diagnostic &diag) {
  printPosition(os, diag.getLocation());
  os << severityName(diag.getSeverity()) << ": " << diag << '\n';
  for (Diagnostic &note : diag.getNotes())
    print(os, note);
}

ToolDiagnosticHandler::ToolDiagnosticHandler(MLIRContext *context,
                                             llvm::raw_ostream &os)
    : ScopedDiagnosticHandler(context) {
  setHandler([&os](Diagnostic &diag) {
    print(os, diag);
    os.flush();
    return success();
  });
}
