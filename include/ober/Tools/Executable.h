//===- Executable.h - a compiled function as a training binary --*- C++ -*-===//
//
// Part of Ober-Train. What `ober-compile` does after the front half (import,
// training step, plan): describe the function for the runtime (its
// manifest), lower it with the CPU pipeline, emit the object in process,
// write its weights as safetensors beside it, and link it with the runtime
// (lib/Runtime: the kernel library and the executable's main).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TOOLS_EXECUTABLE_H
#define OBER_TOOLS_EXECUTABLE_H

#include "ober/Runtime/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::ober {

struct ExecutableOptions {
  /// The executable to write (the weights go to `<output>.safetensors`).
  std::string output;
  /// What to stop at: the lowered MLIR, LLVM IR, the object, or the
  /// executable.
  enum Emit { MLIR, LLVMIR, Object, Executable } emit = Executable;
  /// Where the program runs: the host's cores, or an NVIDIA GPU per rank
  /// (its buffers in GPU memory, kernels in a fatbin for `cudaChips`).
  enum Target { CPU, CUDA } target = CPU;
  /// With the CPU target, for tests: compile as the CUDA target maps the
  /// program to launches, each launch's threads then run as loops on the
  /// CPU (buildCUDAMappingOnCPUPipeline).
  bool cudaMappingOnCPU = false;
  /// The CUDA chips to compile machine code for (sm_NN; empty: the CUDA
  /// pipeline's default).
  std::vector<std::string> cudaChips;
  /// How attention compiles ("blocked", "decomposed" or "fused"; empty:
  /// the target's default, blocked on both).
  std::string attention;
  /// With attention "blocked", queries a block (0: chosen from the
  /// scores' size).
  int64_t attentionBlock = 0;
  /// The target CPU ("native": the host's) of the host code.
  std::string cpu = "native";
  /// The model's path (for messages and to find its weights).
  std::string model;
  /// A weights file to use instead of the module's own.
  std::string weights;
  /// The planner's report (JSON) of the step, for the manifest's model
  /// FLOPs, peak and predictions ("" when unplanned).
  std::string planReport;
};

/// The manifest of `func`: a training step's arguments by their `ober.*`
/// roles, or (`inference`) a forward function's parameters and inputs.
FailureOr<::ober::rt::Program> describeProgram(func::FuncOp func,
                                               bool inference);

/// Compiles `func` of `module` for `options.target` and writes what
/// `options` asks for. The module must hold static shapes and one device's program.
LogicalResult buildExecutable(ModuleOp module, func::FuncOp func,
                              bool inference,
                              const ExecutableOptions &options);

} // namespace mlir::ober

#endif // OBER_TOOLS_EXECUTABLE_H
