//===- PartitionPass.cpp - --ober-partition -------------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Partitioning/Passes.h"

#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Dialect/Ober/IR/TensorSizes.h"
#include "ober/Partitioning/Partition.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace mlir::ober {
#define GEN_PASS_DEF_PARTITIONPASS
#include "ober/Partitioning/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;
using namespace mlir::ober;

namespace {
struct PartitionPass : public ober::impl::PartitionPassBase<PartitionPass> {
  using PartitionPassBase::PartitionPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyTensorSizes(module)))
      return signalPassFailure();
    if (!(bucketMB > 0)) {
      module.emitError("ober-partition: bucket-mb must be positive, got ")
          << bucketMB;
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> steps;
    for (auto f : module.getOps<func::FuncOp>())
      if (f->hasAttr(OberDialect::kTrainStepAttrName))
        steps.push_back(f);
    if (steps.size() != 1) {
      module.emitError("ober-partition: expected one train step (a function "
                       "with 'ober.train_step'), found ")
          << steps.size();
      return signalPassFailure();
    }
    PartitionOptions options;
    options.bucketBytes = static_cast<int64_t>(bucketMB * (1 << 20));
    if (failed(partitionTrainStep(module, steps.front(), options)))
      signalPassFailure();
  }
};
} // namespace
