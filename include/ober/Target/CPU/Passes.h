//===- Passes.h - the CPU target's passes ------------------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TARGET_CPU_PASSES_H
#define OBER_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ober {

#define GEN_PASS_DECL
#include "ober/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ober/Target/CPU/Passes.h.inc"

} // namespace mlir::ober

#endif // OBER_TARGET_CPU_PASSES_H
