//===- TorchScriptImporter.h - TorchScript models to ober IR ---*- C++ -*-===//
//
// Part of Ober-Train. Imports a TorchScript module saved by
// `torch.jit.trace(...).save(path)`, `torch.jit.script` or `ober.export`
// into a func.func of ober ops. Input shapes come from ober.export's
// record or are given (InputShapes.h). Parameters and float buffers become
// arguments tagged `ober.param` with their `state_dict` names; their
// values go to a safetensors weights file the module names in
// `ober.weights`. Every aten op without a mapping is reported in one error,
// each with its Python source line.
//
// Built only with libtorch (the optional TORCH component).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_IMPORTERS_TORCHSCRIPT_TORCHSCRIPTIMPORTER_H
#define OBER_IMPORTERS_TORCHSCRIPT_TORCHSCRIPTIMPORTER_H

#include "ober/Importers/InputShapes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace mlir::ober {

struct TorchScriptImportOptions {
  /// Where to write the weights (default: the model's path with the
  /// extension `.safetensors`).
  std::string weightsPath;
  /// Name of the function to create.
  std::string functionName = "main";
  /// Shapes and types of the forward method's inputs (by name or in
  /// order); they replace those the file records (ober.export's).
  std::vector<InputShape> inputShapes;
};

/// Imports the TorchScript module at `path`. Errors go to the context's
/// diagnostic handler; returns null on failure.
OwningOpRef<ModuleOp>
importTorchScriptFile(StringRef path, MLIRContext &context,
                      const TorchScriptImportOptions &options = {});

/// Registers `--import-torchscript` for ober-translate.
void registerTorchScriptTranslation();

} // namespace mlir::ober

#endif // OBER_IMPORTERS_TORCHSCRIPT_TORCHSCRIPTIMPORTER_H
