//===- Pipeline.cpp - the CUDA pipeline -----------------------------------===//
//
// Part of Ober-Train. See Pipeline.h.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CUDA/Pipeline.h"
#include "ober/Target/CPU/Pipeline.h"
#include "ober/Target/CUDA/Passes.h"
#include "ober/Conversion/LoweringKinds.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

using namespace mlir;

SmallVector<std::string> ober::CUDAPipelineOptions::chipList() const {
  if (chips.empty())
    return {"sm_80", "sm_90", "sm_100"};
  return SmallVector<std::string>(chips.begin(), chips.end());
}

std::string ober::CUDAPipelineOptions::checkChips() const {
  for (const std::string &chip : chipList()) {
    StringRef name(chip), digits;
    unsigned version = 0;
    bool ok = name.consume_front("sm_");
    digits = name.take_while(llvm::isDigit);
    StringRef suffix = name.drop_front(digits.size());
    ok = ok && !digits.empty() && !digits.getAsInteger(10, version) &&
         (suffix.empty() || suffix == "a" || suffix == "f");
    if (!ok)
      return "'" + chip +
             "' is not a chip name (sm_NN, as sm_80,sm_90,sm_100; an 'a' or "
             "'f' suffix for a chip's own features)";
    if (version < static_cast<unsigned>(kOldestCUDAChip))
      return "'" + chip + "' is older than CUDA 13 builds for (sm_" +
             std::to_string(kOldestCUDAChip) + " and newer)";
  }
  return "";
}

std::string mlir::ober::findCUDAToolkit(StringRef given) {
  // A root is a toolkit when it has the two tools and libdevice: wrapper
  // scripts such as /usr/local/bin/ptxas put a directory on PATH whose parent
  // has the tools but not nvvm/, which gpu-module-to-binary needs.
  auto complete = [](StringRef root) {
    for (StringRef tool : {"ptxas", "fatbinary"}) {
      SmallString<128> path(root);
      llvm::sys::path::append(path, "bin", tool);
      if (!llvm::sys::fs::can_execute(path))
        return false;
    }
    SmallString<128> libdevice(root);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice",
                            "libdevice.10.bc");
    return llvm::sys::fs::is_regular_file(libdevice);
  };
  if (!given.empty())
    return complete(given) ? given.str() : "";
  SmallVector<std::string> roots;
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (std::optional<std::string> v = llvm::sys::Process::GetEnv(var))
      roots.push_back(*v);
  if (llvm::ErrorOr<std::string> ptxas = llvm::sys::findProgramByName("ptxas"))
    roots.push_back(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
            .str());
  roots.push_back("/usr/local/cuda");
  for (const std::string &root : roots)
    if (complete(root))
      return root;
  return "";
}

using mlir::ober::ConvertOberToLinalgOptions;

namespace {
/// What the CUDA target asks of the lowering on tensors, and its passes
/// there.
ConvertOberToLinalgOptions cudaLowering(ConvertOberToLinalgOptions lowering) {
  // No convolution library on the device: convolutions as cuBLASLt
  // products over gathered windows.
  lowering.convolutions = mlir::ober::kCUDAConvolutions.str();
  // cuBLASLt multiplies bf16 and f16 on tensor cores, accumulating in f32.
  lowering.lowPrecisionProducts = true;
  return lowering;
}

void buildCUDABufferization(OpPassManager &pm,
                            const ConvertOberToLinalgOptions &lowering) {
  buildBufferizationPipeline(
      pm,
      [](OpPassManager &pm) {
        pm.addNestedPass<func::FuncOp>(ober::createSplitReductionsPass());
        pm.addPass(createCanonicalizerPass());
      },
      lowering);
}
} // namespace

void mlir::ober::buildCUDAPipeline(OpPassManager &pm,
                                   const CUDAPipelineOptions &options) {
  ConvertOberToLinalgOptions lowering;
  lowering.attention = options.attention;
  lowering.attentionBlock = options.attentionBlock;
  buildCUDABufferization(pm, cudaLowering(lowering));
  pm.addPass(createConstantsOnDevicePass());
  buildDeallocationPipeline(pm);
  pm.addPass(createKernelCallsPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  MapToGPUPassOptions map;
  map.threadsPerBlock = options.threadsPerBlock;
  pm.addNestedPass<func::FuncOp>(createMapToGPUPass(map));
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createMergeKernelModulesPass());
  // The host's guards of launches whose work is known not to be empty
  // (`scf.if %true`) go before lowering to blocks: each would split the
  // step's function, moving all that follows it, which is quadratic in a
  // long step (minutes and tens of GB for a 24-layer GPT).
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createQueueLaunchesPass());
  for (const std::string &chip : options.chipList()) {
    GpuNVVMAttachTargetOptions target;
    target.chip = chip;
    target.optLevel = 3;
    pm.addPass(createGpuNVVMAttachTarget(target));
  }
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  // Host code: buffers through the runtime's device allocator.
  FinalizeMemRefToLLVMConversionPassOptions memrefs;
  memrefs.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefs));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // The toolkit also gives libdevice (erf, exp, ... of the kernels).
  std::string toolkit = findCUDAToolkit(options.toolkit);
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  FatbinPassOptions fatbin;
  fatbin.toolkit = toolkit.empty() ? options.toolkit.getValue() : toolkit;
  pm.addPass(createFatbinPass(fatbin));
}

void mlir::ober::buildCUDAMappingOnCPUPipeline(
    OpPassManager &pm, const ConvertOberToLinalgOptions &lowering) {
  // bf16 and f16 products too: the CPU library's compute as cuBLASLt's.
  buildCUDABufferization(pm, cudaLowering(lowering));
  // Constants a kernel reads are filled by a kernel or copied ("uploaded",
  // a host copy here).
  pm.addPass(createConstantsOnDevicePass());
  buildDeallocationPipeline(pm);
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createMapToGPUPass());
  pm.addNestedPass<func::FuncOp>(createTestLaunchesOnHostPass());
  buildCPULoweringToLLVM(pm);
}

void mlir::ober::registerCUDAPipelineDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  registerGPUDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  registerNVVMDialectTranslation(registry);
}

void mlir::ober::registerCUDAPipeline() {
  registerTargetCUDAPasses();
  PassPipelineRegistration<CUDAPipelineOptions>(
      "ober-cuda-pipeline",
      "Lower per-device ober programs to host code and fatbins for NVIDIA "
      "GPUs",
      [](OpPassManager &pm, const CUDAPipelineOptions &options) {
        buildCUDAPipeline(pm, options);
      });
}
