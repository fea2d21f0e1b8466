//===- FunctionSelection.h - which function a tool or pass works on -*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TRANSFORMS_FUNCTIONSELECTION_H
#define OBER_TRANSFORMS_FUNCTIONSELECTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::ober {

/// The function called `name`, or the module's only public function with a
/// body when `name` is empty. Otherwise emits an error that says how to
/// choose (`how`, e.g. "--function" or "function=") and returns null.
func::FuncOp selectFunction(ModuleOp module, StringRef name,
                            StringRef how = "--function");

} // namespace mlir::ober

#endif // OBER_TRANSFORMS_FUNCTIONSELECTION_H
