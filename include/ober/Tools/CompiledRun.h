//===- CompiledRun.h - a function through the CPU pipeline -----*- C++ -*-===//
//
// Part of Ober-Train. Runs one function of a module compiled by the CPU
// pipeline (ober/Target/CPU/Pipeline.h) in this process, on the interpreter's
// tensors, so that every lowering is checked against the interpreter
// (`ober-run --engine=cpu`).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TOOLS_COMPILEDRUN_H
#define OBER_TOOLS_COMPILEDRUN_H

#include "ober/Conversion/Passes.h"
#include "ober/Reference/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <memory>

namespace mlir::ober {

/// `func` (and what it calls) compiled for the CPU, once; `run` calls it
/// on the interpreter's tensors as often as needed.
class CompiledFunction {
public:
  /// Errors name the op the pipeline could not lower. `lowering`: the
  /// options of convert-ober-to-linalg.
  static FailureOr<std::unique_ptr<CompiledFunction>>
  compile(ModuleOp module, func::FuncOp func,
          const ConvertOberToLinalgOptions &lowering = {});
  ~CompiledFunction();
  FailureOr<SmallVector<reference::Tensor>>
  run(ArrayRef<reference::Tensor> args);

private:
  CompiledFunction() = default;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Compiles `func` and runs it once on `args`.
FailureOr<SmallVector<reference::Tensor>>
runCompiled(ModuleOp module, func::FuncOp func,
            ArrayRef<reference::Tensor> args,
            const ConvertOberToLinalgOptions &lowering = {});

} // namespace mlir::ober

#endif // OBER_TOOLS_COMPILEDRUN_H
