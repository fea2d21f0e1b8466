//===- ober-translate.cpp - model import and export -----------------------===//
//
// Part of Ober-Train. `ober-translate --import-onnx model.onnx` prints ober
// IR.
//
//===----------------------------------------------------------------------===//

#include "ober/Importers/ONNX/ONNXImporter.h"

#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::ober::registerONNXTranslation();
  return mlir::asMainReturnCode(
      mlir::mlirTranslateMain(argc, argv, "Ober-Train translation driver"));
}
