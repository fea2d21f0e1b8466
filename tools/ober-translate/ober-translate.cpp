//===- ober-translate.cpp - model import and generation -------------------===//
//
// Part of Ober-Train.
//
//   ober-translate --import-onnx model.onnx          ONNX -> ober IR
//   ober-translate --import-torchscript model.pt     TorchScript -> ober IR
//                                                    (with libtorch: runs
//                                                    ober-import-torchscript)
//   ober-translate --emit-gpt="layers=2 hidden=64 heads=4 seq=16 vocab=128"
//
//===----------------------------------------------------------------------===//

#include "ober/Importers/Generators/GPT.h"
#include "ober/Importers/InputShapes.h"
#include "ober/Importers/ONNX/ONNXImporter.h"
#include "ober/Tools/CommandLine.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

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

#ifdef OBER_HAVE_TORCH
// Handled before mlirTranslateMain too (by ober-import-torchscript).
static llvm::cl::opt<bool> importTorchScriptOption(
    "import-torchscript",
    llvm::cl::desc("Import a TorchScript module (.pt) into the ober dialect "
                   "(in ober-import-torchscript, which loads libtorch)"),
    llvm::cl::cat(category));

/// Runs ober-import-torchscript (beside this tool) with this command line
/// in this process's place: only that tool loads libtorch, whose start-up
/// would otherwise cost every use of ober-translate most of a second.
static int importTorchScript(char **argv) {
  std::string importer =
      mlir::ober::toolBesideThisOne("ober-import-torchscript");
  if (!llvm::sys::fs::can_execute(importer)) {
    llvm::errs() << "error: --import-torchscript: no ober-import-torchscript "
                 << "beside this tool (" << importer << ")\n";
    return 1;
  }
  argv[0] = importer.data();
  execv(importer.c_str(), argv);
  llvm::errs() << "error: --import-torchscript: cannot run " << importer
               << ": " << std::strerror(errno) << "\n";
  return 1;
}
#endif

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
#ifdef OBER_HAVE_TORCH
    if (arg == "--import-torchscript" || arg == "-import-torchscript")
      return importTorchScript(argv);
#endif
  }
  mlir::ober::registerONNXTranslation();
#ifdef OBER_HAVE_TORCH
  mlir::ober::linkInputShapeOption();
#endif
  // mlirTranslateMain registers its own options (the translations, -o,
  // the printing flags) after this: they stay listed.
  mlir::ober::hideForeignOptions({&category});
  return asMainReturnCode(
      mlirTranslateMain(argc, argv, "Ober-Train translation driver"));
}
