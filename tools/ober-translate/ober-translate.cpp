//===- ober-translate.cpp - model import and generation -------------------===//
//
// Part of Ober-Train.
//
//   ober-translate --import-onnx model.onnx          ONNX -> ober IR
//   ober-translate --import-torchscript model.pt     TorchScript -> ober IR
//                                                    (with libtorch)
//   ober-translate --emit-gpt="layers=2 hidden=64 heads=4 seq=16 vocab=128"
//
//===----------------------------------------------------------------------===//

#include "ober/Importers/Generators/GPT.h"
#include "ober/Importers/ONNX/ONNXImporter.h"
#include "ober/Tools/CommandLine.h"
#ifdef OBER_HAVE_TORCH
#include "ober/Importers/TorchScript/TorchScriptImporter.h"
#endif

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static llvm::cl::OptionCategory category("ober-translate options");
// Handled before mlirTranslateMain (which would read an input file);
// declared for --help.
static llvm::cl::opt<std::string> emitGPTOption(
    "emit-gpt",
    llvm::cl::desc("Write a GPT in the ober dialect (no input file): "
                   "--emit-gpt=\"layers=2 hidden=64 heads=4 seq=16 "
                   "vocab=128\""),
    llvm::cl::value_desc("spec"), llvm::cl::cat(category));

/// `--emit-gpt=SPEC` takes no input file, so it is handled before
/// mlirTranslateMain (which would read one).
static int emitGPT(llvm::StringRef spec) {
  mlir::ober::GPTConfig config;
  std::string error;
  if (!mlir::ober::parseGPTConfig(spec, config, error)) {
    llvm::errs() << "error: --emit-gpt: " << error << "\n";
    return 1;
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module = mlir::ober::buildGPT(context, config);
  if (!module)
    return 1;
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg.consume_front("--emit-gpt=") || arg.consume_front("-emit-gpt="))
      return emitGPT(arg);
    if ((arg == "--emit-gpt" || arg == "-emit-gpt") && i + 1 < argc)
      return emitGPT(argv[i + 1]);
  }
  mlir::ober::registerONNXTranslation();
#ifdef OBER_HAVE_TORCH
  mlir::ober::registerTorchScriptTranslation();
#endif
  // mlirTranslateMain registers its own options (the translations, -o,
  // the printing flags) after this: they stay listed.
  mlir::ober::hideForeignOptions({&category});
  return asMainReturnCode(
      mlirTranslateMain(argc, argv, "Ober-Train translation driver"));
}
