//===- ONNXImporter.h - ONNX models to ober IR ------------------*- C++ -*-===//
//
// Part of Ober-Train. Imports ONNX models (opsets 6 to 17 of the default
// domain) into a func.func of ober ops. Float initializers become parameters
// (arguments tagged `ober.param`) whose values stay in the ONNX file (or its
// external data), named by the module's `ober.weights`; small and integer
// initializers become constants. Shape arithmetic on constants folds away.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_IMPORTERS_ONNX_ONNXIMPORTER_H
#define OBER_IMPORTERS_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "ober/Reference/Tensor.h"

#include <map>
#include <string>

namespace mlir::ober {

struct ONNXImportOptions {
  /// Sizes for symbolic dimensions (`dim_param`), e.g. {"batch", 8}; other
  /// symbolic or unknown sizes stay dynamic.
  std::map<std::string, int64_t> dimValues;
  /// Values of the graph's data inputs (in order) known at import time.
  /// Where an op needs a compile-time constant (a Reshape shape, Slice
  /// bounds, ...) and gets a graph input, its known value is used; the input
  /// stays an argument, so the compiled function is specialised to it.
  /// Their shapes also pin the inputs' dynamic sizes.
  std::vector<reference::Tensor> knownInputs;
  /// Lengths of the graph's sequence inputs, by name: a sequence input of
  /// length n becomes n arguments (and counts as n known inputs); a
  /// sequence output becomes as many results as it has tensors.
  std::map<std::string, int64_t> sequenceLengths;
  /// Name of the function to create.
  std::string functionName = "main";
};

/// True for the names of ONNX models: `.onnx` (binary) and `.onnxtxt`
/// (ONNX's text format).
bool isONNXPath(StringRef path);

/// Imports the ONNX model at `path`, binary or in ONNX's text format. External data is read relative to the
/// model's folder and may not leave it. Errors are emitted to the context's
/// diagnostic handler; returns null on failure.
OwningOpRef<ModuleOp> importONNXFile(StringRef path, MLIRContext &context,
                                     const ONNXImportOptions &options = {});

/// Imports a serialized ModelProto held in memory. `name` labels
/// diagnostics and becomes the module's `ober.weights`; external data is
/// read under `baseDir`, and refused when it is empty.
OwningOpRef<ModuleOp> importONNXBytes(StringRef bytes, StringRef name,
                                      MLIRContext &context,
                                      const ONNXImportOptions &options = {},
                                      StringRef baseDir = "");

/// Registers `--import-onnx` for ober-translate, with `--onnx-dim`.
void registerONNXTranslation();

/// Import options from the command line (`--onnx-dim name=size`).
ONNXImportOptions onnxOptionsFromCommandLine();

/// Reads the named initializers of the ONNX model at `path` (with external
/// data) as tensors of the given element types. Returns false and sets
/// `error` naming the initializer on failure.
bool readONNXInitializers(
    StringRef path, const std::map<std::string, Type> &wanted,
    std::map<std::string, reference::Tensor> &out, std::string &error);

} // namespace mlir::ober

#endif // OBER_IMPORTERS_ONNX_ONNXIMPORTER_H
