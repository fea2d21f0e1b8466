//===- CompiledRun.h - a function through the CPU pipeline -----*- C++ -*-===//
//
// Part of Ober-Train. Runs one function of a module compiled by the CPU
// pipeline (ober/Target/CPU.h) in this process, on the interpreter's
// tensors, so that every lowering is checked against the interpreter
// (`ober-run --engine=cpu`).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TOOLS_COMPILEDRUN_H
#define OBER_TOOLS_COMPILEDRUN_H

#include "ober/Reference/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::ober {

/// Compiles `func` (and what it calls) of `module` for the CPU and runs it
/// on `args`; errors name the op the pipeline could not lower.
FailureOr<SmallVector<reference::Tensor>>
runCompiled(ModuleOp module, func::FuncOp func,
            ArrayRef<reference::Tensor> args);

} // namespace mlir::ober

#endif // OBER_TOOLS_COMPILEDRUN_H
