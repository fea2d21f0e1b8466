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
#include "ober/Transforms/FunctionSelection.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::ober {

/// Parses or imports `path` (.mlir, .mlirbc, .onnx, .onnxtxt, .pt). `knownInputs`
/// are values of the model's data inputs that an importer may specialise
/// on (ONNX: shape arguments; TorchScript: their shapes and types, unless
/// `--input-shape` gives them).
/// Diagnostics go to the context's handler.
OwningOpRef<ModuleOp>
loadModel(StringRef path, MLIRContext &context,
          ArrayRef<reference::Tensor> knownInputs = {});

/// True if `path` names a format an importer reads.
bool isImportedFormat(StringRef path);

/// Loads the values of `func`'s parameters (arguments tagged `ober.param`)
/// from `weightsPath`, or from the module's `ober.weights` file resolved
/// against `modelDir` when empty. Every parameter must be present with its
/// declared type. A module that names no weights file gets the seeded
/// initialization of `initialParameter` when `seed` is given (and an error
/// otherwise). Returns argument index -> tensor.
FailureOr<std::map<unsigned, reference::Tensor>>
loadParameters(func::FuncOp func, StringRef modelDir, StringRef weightsPath,
               std::optional<uint64_t> seed = std::nullopt);

/// The seeded initial value of a parameter that has no stored weights:
/// 1-D parameters named like a scale (`*weight`, `*scale`, `*gamma`) are
/// ones, other 1-D ones zeros, and higher-rank ones are drawn from
/// N(0, 0.02^2) (GPT-2's initialization) by a counter-based generator keyed
/// by `seed` and the name, so every run and every device agree.
reference::Tensor initialParameter(StringRef name, RankedTensorType type,
                                   uint64_t seed);

} // namespace mlir::ober

#endif // OBER_TOOLS_MODELLOADER_H
