//===- ober-opt.cpp - the ober MLIR driver --------------------------------===//
//
// Part of Ober-Train. Registers the ober dialect, the upstream dialects the
// pipeline uses and every ober pass, then hands over to MlirOptMain. Model
// files an importer reads (.onnx) are imported first, by extension.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "ober/InitAll.h"
#include "ober/Tools/CommandLine.h"
#include "ober/Tools/ModelLoader.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

/// Imports `input` and runs MlirOptMain on the imported IR.
static LogicalResult importAndRun(StringRef input, StringRef output,
                                  DialectRegistry &registry) {
  std::string text;
  {
    MLIRContext context(registry);
    context.printOpOnDiagnostic(false);
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    OwningOpRef<ModuleOp> module = ober::loadModel(input, context);
    if (!module)
      return failure();
    llvm::raw_string_ostream os(text);
    module->print(os, OpPrintingFlags().enableDebugInfo());
  }
  std::string error;
  auto out = openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << error << "\n";
    return failure();
  }
  if (failed(MlirOptMain(out->os(),
                         llvm::MemoryBuffer::getMemBufferCopy(text, input),
                         registry, MlirOptMainConfig::createFromCLOptions())))
    return failure();
  out->keep();
  return success();
}

int main(int argc, char **argv) {
  DialectRegistry registry;
  ober::registerAllDialects(registry);
  ober::registerAllPasses();
  // MlirOptMain's options and the passes are registered by the call below:
  // they stay listed.
  ober::hideForeignOptions({});
  auto [input, output] = registerAndParseCLIOptions(
      argc, argv, "Ober-Train optimizer driver\n", registry);
  // Diagnostics name the op at fault; printing the whole function or module
  // after each (MLIR's default) buries them. --mlir-print-op-on-diagnostic
  // still turns it on.
  auto *printOp = static_cast<llvm::cl::opt<bool> *>(
      llvm::cl::getRegisteredOptions().lookup("mlir-print-op-on-diagnostic"));
  if (printOp && printOp->getNumOccurrences() == 0)
    printOp->setValue(false);
  if (ober::isImportedFormat(input))
    return asMainReturnCode(importAndRun(input, output, registry));
  return asMainReturnCode(MlirOptMain(argc, argv, input, output, registry));
}
