//===- ober-import-torchscript.cpp - the TorchScript importer's process ---===//
//
// Part of Ober-Train.
//
//   ober-import-torchscript --import-torchscript model.pt [-o out.mlir]
//                           [--input-shape=...]
//
// The one tool that links libtorch, whose start-up (loading it and
// registering its operators) takes most of a second: ober-translate
// --import-torchscript runs this program in its place, and ober-opt,
// ober-run and ober-compile run it for `.pt` files (ModelLoader.cpp), so
// that every other use of the tools starts without libtorch.
//
//===----------------------------------------------------------------------===//

#include "ober/Importers/TorchScript/TorchScriptImporter.h"
#include "ober/Tools/CommandLine.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::ober::registerTorchScriptTranslation();
  mlir::ober::hideForeignOptions({});
  return mlir::asMainReturnCode(mlir::mlirTranslateMain(
      argc, argv, "Ober-Train TorchScript importer (ober-translate "
                  "--import-torchscript runs it)"));
}
