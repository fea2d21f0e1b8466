//===- onnx.cpp - fuzz target: ONNX models ---------------------------------===//
//
// Part of Ober-Train. Feeds arbitrary bytes to the ONNX importer; any crash,
// hang or sanitizer report is a bug. Diagnostics are expected and dropped.
//
//   ober-fuzz-onnx -max_total_time=60 corpus/  (or utils/fuzz/run.sh)
//
//===----------------------------------------------------------------------===//

#include "ober/Importers/ONNX/ONNXImporter.h"
#include "ober/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    mlir::ober::registerAllDialects(*r);
    return r;
  }();
  // A fresh context per input: nothing leaks from one input to the next.
  mlir::MLIRContext context(*registry,
                            mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler silence(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  (void)mlir::ober::importONNXBytes(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx",
      context);
  return 0;
}
