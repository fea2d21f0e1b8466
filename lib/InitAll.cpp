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
#include "mlir/Transforms/Passes.h"
#include "ober/Conversion/Passes.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Dialect/Ober/IR/ShardingInterfaceImpl.h"
#include "ober/Partitioning/Passes.h"
#include "ober/Planning/Passes.h"
#include "ober/Target/CPU.h"
#include "ober/Training/Passes.h"
#include "ober/Transforms/Passes.h"

void mlir::ober::registerAllDialects(DialectRegistry &registry) {
  registry.insert<OberDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect, shard::ShardDialect,
                  tensor::TensorDialect>();
  registerShardingInterfaceExternalModels(registry);
  registerCPUPipelineDialects(registry);
}

void mlir::ober::registerAllPasses() {
  // Upstream, generic passes used between ober stages.
  mlir::registerTransformsPasses();
  // Sharding propagation and partitioning on the shard dialect.
  shard::registerShardPasses();
  // ober passes, area by area.
  registerTransformsPasses();
  registerTrainingPasses();
  registerPlanningPasses();
  registerPartitioningPasses();
  registerConversionPasses();
  registerCPUPipeline();
}
