//===- Partition.h - a planned training step as an SPMD program -*- C++ -*-===//
//
// Part of Ober-Train. Turns the training step that `--ober-plan` annotated
// into the program every device of a `shard.grid` runs, with each
// collective explicit. Arguments and results carry `ober.split` (per
// dimension, the grid axis that splits it, or -1), so `ober-run` can cut
// global inputs and assemble global results.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_PARTITIONING_PARTITION_H
#define OBER_PARTITIONING_PARTITION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::ober {

struct PartitionOptions {
  /// Gradients are reduced in buckets of about this many bytes, last
  /// layer first, so each bucket can start while earlier layers still run
  /// backward (PyTorch DDP's default: 25 MiB).
  int64_t bucketBytes = 25 << 20;
};

/// Partitions train step `step` of `module` by the module's `ober.plan`
/// (data, tensor, sequence and pipeline parallelism, ZeRO 0-3,
/// recomputation, f32/bf16/f16 compute). Emits an error naming the plan
/// field or the op for what it cannot partition.
LogicalResult partitionTrainStep(ModuleOp module, func::FuncOp step,
                                 const PartitionOptions &options);

} // namespace mlir::ober

#endif // OBER_PARTITIONING_PARTITION_H
