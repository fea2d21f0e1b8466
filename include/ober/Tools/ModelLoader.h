//===- ModelLoader.h - open a model file for the ober tools -----*- C++ -*-===//
//
// Part of Ober-Train. The tools take `.mlir` files and anything an importer
// reads (chosen by extension), and find a module's parameters in its weights
// file.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TOOLS_MODELLOADER_H
#define OBER_TOOLS_MODELLOADER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "ober/Reference/Tensor.h"

#include <map>
#include <string>

namespace mlir::ober {

/// Parses or imports `path` (.mlir, .mlirbc, .onnx). `knownInputs` are
/// values of the model's data inputs that an importer may specialise on.
/// Diagnostics go to the context's handler.
OwningOpRef<ModuleOp>
loadModel(StringRef path, MLIRContext &context,
          ArrayRef<reference::Tensor> knownInputs = {});

/// True if `path` names a format an importer reads.
bool isImportedFormat(StringRef path);

/// The function called `name`, or the module's only public function when
/// `name` is empty. Emits an error listing the candidates otherwise.
func::FuncOp selectFunction(ModuleOp module, StringRef name);

/// Loads the values of `func`'s parameters (arguments tagged `ober.param`)
/// from `weightsPath`, or from the module's `ober.weights` file resolved
/// against `modelDir` when empty. Every parameter must be present with its
/// declared type. Returns argument index -> tensor.
FailureOr<std::map<unsigned, reference::Tensor>>
loadParameters(func::FuncOp func, StringRef modelDir, StringRef weightsPath);

} // namespace mlir::ober

#endif // OBER_TOOLS_MODELLOADER_H
