//===- Pipeline.h - the CUDA pipeline -----------------------------*- C++ -*-===//
//
// Part of Ober-Train. From per-device ober programs on tensors to host code
// in the LLVM dialect and one fatbin per kernel module: the first half every
// target shares (Target/CPU/Pipeline.h: linalg on buffers), constants and
// library calls on the device, every loop nest as a one-dimensional grid,
// NVVM for each chip, ptxas and fatbinary. The host code calls MLIR's
// `mgpu*` functions and the CUDA kernel library (ober/Runtime/CUDAKernels.h),
// which libober_rt_cuda defines.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TARGET_CUDA_PIPELINE_H
#define OBER_TARGET_CUDA_PIPELINE_H

#include "ober/Conversion/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::ober {

struct CUDAPipelineOptions : public PassPipelineOptions<CUDAPipelineOptions> {
  ListOption<std::string> chips{
      *this, "chips",
      llvm::cl::desc("GPUs to compile machine code for (sm_NN; the newest "
                     "also as PTX for later GPUs); default sm_80,sm_90,"
                     "sm_100")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root (ptxas, fatbinary, libdevice); "
                     "default: CUDA_ROOT, CUDA_HOME, PATH, /usr/local/cuda"),
      llvm::cl::init("")};
  Option<int64_t> threadsPerBlock{
      *this, "threads-per-block",
      llvm::cl::desc("Threads per block of generated kernels"),
      llvm::cl::init(256)};
  Option<std::string> attention{
      *this, "attention",
      llvm::cl::desc("How attention compiles: 'blocked' (primitive ops a "
                     "block of queries at a time, the scores through "
                     "cuBLASLt), 'decomposed' (the whole score matrix at "
                     "once), 'fused' (memory-efficient loops on CUDA "
                     "cores, no score matrix) or 'flash' (the CUDA "
                     "library's tensor-core kernels where they apply: "
                     "bf16/f16, no mask, heads up to 128; blocked "
                     "elsewhere)"),
      llvm::cl::init("blocked")};
  Option<int64_t> attentionBlock{
      *this, "attention-block",
      llvm::cl::desc("With attention=blocked, queries a block (0: chosen "
                     "from the scores' size)"),
      llvm::cl::init(0)};

  /// The chips, defaulted.
  SmallVector<std::string> chipList() const;
  /// Empty when every chip is an `sm_NN` name (an `a` or `f` suffix
  /// allowed) that CUDA 13 builds for (kOldestCUDAChip on), else why not.
  std::string checkChips() const;
};

/// The oldest chip CUDA 13's ptxas builds for (sm_75, Turing).
inline constexpr int kOldestCUDAChip = 75;

/// The root of the CUDA toolkit whose bin/ holds ptxas and fatbinary:
/// `given` when set, else CUDA_ROOT, CUDA_HOME, CUDA_PATH, the directory
/// above the ptxas on PATH, /usr/local/cuda; empty when none has them.
std::string findCUDAToolkit(StringRef given);

/// Appends the CUDA pipeline to `pm` (a module pass manager).
void buildCUDAPipeline(OpPassManager &pm, const CUDAPipelineOptions &options);

/// For tests on machines without a GPU: the CUDA pipeline's mapping of a
/// program to launches (split reductions, constants on the device,
/// `ober-cuda-map-to-gpu`), each
/// launch's threads then run as loops on the CPU, with the CPU's kernel
/// library and runtime. An executable built so computes what the CUDA
/// executable's host code and kernels would, one thread at a time (bf16
/// and f16 matrix products too: the CPU library's accumulate in f32 and
/// round once, as cuBLASLt's do; the order of the sums aside).
void buildCUDAMappingOnCPUPipeline(
    OpPassManager &pm, const ConvertOberToLinalgOptions &lowering = {});

/// Registers the dialects, interfaces and translations the pipeline and
/// the LLVM IR translation of its output need (gpu, NVVM and its target,
/// the to-LLVM interfaces convert-gpu-to-nvvm uses).
void registerCUDAPipelineDialects(DialectRegistry &registry);

/// Registers `--ober-cuda-pipeline` and the CUDA passes for ober-opt.
void registerCUDAPipeline();

} // namespace mlir::ober

#endif // OBER_TARGET_CUDA_PIPELINE_H
