//===- InitAll.cpp - register everything ober-opt knows -------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/Passes.h"
#include "ober/Conversion/Passes.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Dialect/Ober/IR/ShardingInterfaceImpl.h"
#include "ober/Partitioning/Passes.h"
#include "ober/Planning/Passes.h"
#include "ober/Target/CPU/Pipeline.h"
#include "ober/Target/CUDA/Pipeline.h"
#include "ober/Training/Passes.h"
#include "ober/Transforms/Passes.h"

void mlir::ober::registerAllDialects(DialectRegistry &registry) {
  registry.insert<OberDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect, shard::ShardDialect,
                  tensor::TensorDialect, cf::ControlFlowDialect,
                  index::IndexDialect, omp::OpenMPDialect, ub::UBDialect,
                  vector::VectorDialect>();
  registerShardingInterfaceExternalModels(registry);
  registerCPUPipelineDialects(registry);
  registerCUDAPipelineDialects(registry);
}

void mlir::ober::registerAllPasses() {
  // Upstream, generic passes used between ober stages, and those of the
  // stages of code generation (to test and inspect them one by one).
  mlir::registerTransformsPasses();
  // The conversions the CPU pipeline runs (not every target's: GPU,
  // SPIR-V and AMDGPU conversions would fill --help).
  ::mlir::registerArithToLLVMConversionPass();
  ::mlir::registerConvertBufferizationToMemRefPass();
  ::mlir::registerConvertControlFlowToLLVMPass();
  ::mlir::registerConvertFuncToLLVMPass();
  ::mlir::registerConvertIndexToLLVMPass();
  ::mlir::registerConvertMathToLLVMPass();
  ::mlir::registerConvertMathToLibmPass();
  ::mlir::registerConvertOpenMPToLLVMPass();
  ::mlir::registerConvertSCFToOpenMPPass();
  ::mlir::registerConvertVectorToLLVMPass();
  ::mlir::registerConvertVectorToSCFPass();
  ::mlir::registerFinalizeMemRefToLLVMConversionPass();
  ::mlir::registerLowerAffinePass();
  ::mlir::registerReconcileUnrealizedCastsPass();
  ::mlir::registerSCFToControlFlowPass();
  registerLinalgPasses();
  bufferization::registerBufferizationPasses();
  bufferization::registerBufferizationPipelines();
  memref::registerMemRefPasses();
  registerSCFPasses();
  // Sharding propagation and partitioning on the shard dialect.
  shard::registerShardPasses();
  // ober passes, area by area.
  registerTransformsPasses();
  registerTrainingPasses();
  registerPlanningPasses();
  registerPartitioningPasses();
  registerConversionPasses();
  registerCPUPipeline();
  registerCUDAPipeline();
}
