//===- ober-opt.cpp - the ober MLIR driver --------------------------------===//
//
// Part of Ober-Train. Registers the ober dialect, the upstream dialects the
// pipeline uses and every ober pass, then hands over to MlirOptMain.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "ober/InitAll.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::ober::registerAllDialects(registry);
  mlir::ober::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Ober-Train optimizer driver\n", registry));
}
