//===- Passes.cpp - the CPU pipeline ---------------------------------------===//
//
// Part of Ober-Train. The pass order is the one verified on these machines
// (../shared/design/CODEGEN.md): bufferization before loops, strided
// metadata expanded before affine lowering, math functions without an
// LLVM intrinsic (erf, the inverse trigonometric ones) through libm.
// Tiling, vectorization and threads come next; this is the scalar form.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CPU/Pipeline.h"
#include "ober/Target/CPU/Passes.h"

#include "ober/Conversion/Passes.h"
#include "ober/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace mlir::ober {
#define GEN_PASS_DEF_COPIESASLOOPSPASS
#include "ober/Target/CPU/Passes.h.inc"
} // namespace mlir::ober

namespace {
struct CopiesAsLoops
    : public ober::impl::CopiesAsLoopsPassBase<CopiesAsLoops> {
  void runOnOperation() override {
    getOperation().walk([](memref::CopyOp copy) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    });
  }
};
} // namespace

OwningOpRef<ModuleOp>
mlir::ober::prepareForCodegen(ModuleOp module, ArrayRef<func::FuncOp> funcs,
                              ArrayRef<bool> writable) {
  MLIRContext *ctx = module.getContext();
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  SmallVector<func::FuncOp> targets;
  for (func::FuncOp func : funcs)
    targets.push_back(copy->lookupSymbol<func::FuncOp>(func.getSymName()));
  for (auto f : copy->getOps<func::FuncOp>())
    if (f.isPublic() && !llvm::is_contained(targets, f))
      f.setPrivate();
  for (NamedAttribute a : llvm::to_vector(copy->getOperation()->getAttrs()))
    if (a.getName().getValue().starts_with("ober."))
      copy->getOperation()->removeAttr(a.getName());
  for (auto f : copy->getOps<func::FuncOp>()) {
    for (NamedAttribute a : llvm::to_vector(f->getDiscardableAttrs()))
      if (a.getName().getValue().starts_with("ober."))
        f->removeAttr(a.getName());
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      f.setArgAttrs(i, DictionaryAttr::get(ctx));
    for (unsigned i = 0; i < f.getNumResults(); ++i)
      f.setResultAttrs(i, DictionaryAttr::get(ctx));
  }
  // One-shot bufferization takes function arguments as writable unless
  // told otherwise: the caller's buffers (a batch read again next step)
  // are read only, but for those it hands over.
  for (func::FuncOp target : targets) {
    target->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
    target.setPublic();
    for (unsigned i = 0; i < target.getNumArguments(); ++i)
      target.setArgAttr(i,
                        bufferization::BufferizationDialect::kWritableAttrName,
                        BoolAttr::get(ctx, i < writable.size() && writable[i]));
  }
  // What the function does not call goes.
  PassManager pm(ctx);
  pm.addPass(createSymbolDCEPass());
  (void)pm.run(*copy);
  return copy;
}

void mlir::ober::buildBufferizationPipeline(
    OpPassManager &pm, llvm::function_ref<void(OpPassManager &)> onTensors,
    const ConvertOberToLinalgOptions &lowering) {
  // Collectives and transfers: asynchronous runtime calls.
  pm.addPass(createConvertShardToRuntime());
  pm.addPass(createConvertOberToLinalg(lowering));
  pm.addPass(createFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createReuseDeadInputsPass());
  onTensors(pm);
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // A loop yields new buffers (the micro-batch loop's sums).
  bufferize.allowReturnAllocsFromLoops = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createReturnInPlacePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::ober::buildDeallocationPipeline(OpPassManager &pm) {
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createFreeAtLastUsePass());
  pm.addPass(createCopiesAsLoopsPass());
}

void mlir::ober::buildCPUPipeline(OpPassManager &pm,
                                  const ConvertOberToLinalgOptions &lowering) {
  buildBufferizationPipeline(
      pm, [](OpPassManager &pm) { pm.addPass(createDistributePass()); },
      lowering);
  buildDeallocationPipeline(pm);
  pm.addPass(createOutlineKernelsPass());
  // Each kernel's chunks as an OpenMP work-sharing loop.
  pm.addPass(createForallToParallelLoopPass());
  pm.addPass(createConvertSCFToOpenMPPass());
  pm.addPass(createCanonicalizerPass());
  buildCPULoweringToLLVM(pm);
}

void mlir::ober::buildCPULoweringToLLVM(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // The fused attention's rows.
  ConvertVectorToLLVMPassOptions vectors;
  vectors.reassociateFPReductions = true;
  pm.addPass(createConvertVectorToLLVMPass(vectors));
  // Polynomials for what vectorizes; intrinsics (fma, floor, sqrt, ...)
  // for what LLVM has; libm for the rest (erf of f64, the inverse
  // trigonometric functions).
  pm.addPass(createVectorizableMathPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // bf16 rounding in integer arithmetic (no compiler-rt in the process).
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::ober::registerCPUPipelineDialects(DialectRegistry &registry) {
  registry.insert<LLVM::LLVMDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerTilingInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
}

void mlir::ober::registerCPUPipeline() {
  registerTargetCPUPasses();
  PassPipelineRegistration<>(
      "ober-cpu-pipeline",
      "Lower per-device ober programs to the LLVM dialect for the CPU",
      [](OpPassManager &pm) { buildCPUPipeline(pm); });
}
