//===- Passes.h - the CUDA target's passes -----------------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TARGET_CUDA_PASSES_H
#define OBER_TARGET_CUDA_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ober {

#define GEN_PASS_DECL
#include "ober/Target/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ober/Target/CUDA/Passes.h.inc"

} // namespace mlir::ober

#endif // OBER_TARGET_CUDA_PASSES_H
