//===- CPU.h - the CPU pipeline -----------------------------------*- C++ -*-===//
//
// Part of Ober-Train. From per-device ober programs on tensors to the LLVM
// dialect: convert-ober-to-linalg, fusion of elementwise producers into
// their consumers, one-shot bufferization (destination-passing style at
// function boundaries, identity layouts), loops, and the LLVM lowering.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TARGET_CPU_H
#define OBER_TARGET_CPU_H

#include "mlir/Pass/PassManager.h"

namespace mlir::ober {

/// Appends the CPU pipeline to `pm` (a module pass manager).
void buildCPUPipeline(OpPassManager &pm);

/// Registers what the pipeline's passes need of the dialects they meet
/// (bufferization models of arith, linalg, tensor, scf and func; the LLVM
/// IR translations).
void registerCPUPipelineDialects(DialectRegistry &registry);

/// Registers `--ober-cpu-pipeline` for ober-opt.
void registerCPUPipeline();

} // namespace mlir::ober

#endif // OBER_TARGET_CPU_H
