//===- Pipeline.h - the CPU pipeline ------------------------------*- C++ -*-===//
//
// Part of Ober-Train. From per-device ober programs on tensors to the LLVM
// dialect: convert-ober-to-linalg, fusion of elementwise producers into
// their consumers, one-shot bufferization (destination-passing style at
// function boundaries, identity layouts), loops, and the LLVM lowering.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TARGET_CPU_PIPELINE_H
#define OBER_TARGET_CPU_PIPELINE_H

#include "ober/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::ober {

/// A copy of `module` ready for the pipeline: `funcs` (and what they call)
/// with MLIR's C interface, the only public functions; ober's attributes
/// (which describe the training step, not code) removed. The functions
/// may write into the buffers of the arguments `writable` names (a
/// training step's parameters and optimizer state:
/// `ober-cpu-return-in-place` then drops the results updated in place);
/// the others are read only.
OwningOpRef<ModuleOp> prepareForCodegen(ModuleOp module,
                                        ArrayRef<func::FuncOp> funcs,
                                        ArrayRef<bool> writable = {});

/// The function attribute `ober-cpu-return-in-place` sets: for each result
/// it dropped, the pair (result index, argument index) of the argument
/// whose buffer holds it.
constexpr llvm::StringLiteral kResultsInPlaceAttrName =
    "ober_cpu.results_in_place";

/// The first half of every target's pipeline: ober programs on tensors to
/// linalg on buffers (attention as `lowering` says, collectives as runtime calls,
/// elementwise chains fused, one-shot bufferization, results written in
/// place). `onTensors` adds the target's passes on tensors, run just before
/// bufferizing (the CPU's: large loop nests in chunks for its threads,
/// ober-cpu-distribute; CUDA's: large reductions split over threads).
/// `lowering`: the options of convert-ober-to-linalg (how convolutions
/// lower).
void buildBufferizationPipeline(
    OpPassManager &pm, llvm::function_ref<void(OpPassManager &)> onTensors,
    const ConvertOberToLinalgOptions &lowering = {});

/// What follows it on every target: buffers freed at their last use, and
/// copies as linalg loops.
void buildDeallocationPipeline(OpPassManager &pm);

/// Appends the CPU pipeline to `pm` (a module pass manager).
void buildCPUPipeline(OpPassManager &pm,
                      const ConvertOberToLinalgOptions &lowering = {});

/// The CPU pipeline's last part, from loops (and what linalg ops are left,
/// as loops) on buffers to the LLVM dialect.
void buildCPULoweringToLLVM(OpPassManager &pm);

/// Registers what the pipeline's passes need of the dialects they meet
/// (bufferization models of arith, linalg, tensor, scf and func; the LLVM
/// IR translations).
void registerCPUPipelineDialects(DialectRegistry &registry);

/// What `emitProgram` writes.
struct ProgramEmission {
  enum Kind { LLVMIR, Object } kind = Object;
  /// The compiled functions (one per pipeline stage) and their argument
  /// count.
  std::vector<std::string> functions;
  unsigned numArgs = 0;
  /// The manifest text (ober/Runtime/Program.h).
  std::string manifest;
  /// The target CPU: "native" (the host's, with its features) or an LLVM
  /// CPU name.
  std::string cpu = "native";
  /// The host code only queues device work (the CUDA target's): it is
  /// optimized at O1 and generated with LLVM's fast register allocator;
  /// a training step's thousands of launch sites in one function would
  /// take minutes at O3.
  bool launchesOnly = false;
};

/// Translates `module` (lowered to the LLVM dialect by the pipeline) to
/// LLVM IR with the entry points `ober_program_entries[stage]` and the
/// manifest,
/// optimizes it at O3 for the target CPU and writes LLVM IR or an object.
LogicalResult emitProgram(ModuleOp module, const ProgramEmission &what,
                          llvm::raw_pwrite_stream &os);

/// Registers `--ober-cpu-pipeline` for ober-opt.
void registerCPUPipeline();

} // namespace mlir::ober

#endif // OBER_TARGET_CPU_PIPELINE_H
