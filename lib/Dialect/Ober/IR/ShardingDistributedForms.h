//===- ShardingDistributedForms.h - ops split on a statistics factor -*- C++
//-*-===//
//
// Part of Ober-Train. The local programs of ops whose rule has a statistics
// factor (ShardingRules.h), split on it: the op's reduction is computed per
// device and all-reduced, and the result stays split. Used by the
// generated `ShardingInterface` models' `partition`.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_DIALECT_OBER_IR_SHARDINGDISTRIBUTEDFORMS_H
#define OBER_LIB_DIALECT_OBER_IR_SHARDINGDISTRIBUTEDFORMS_H

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::ober {

/// Builds the local result of `op` from its local operands `operands` with
/// its statistics all-reduced over `axes` of `grid`; the operands and the
/// result must be split alike. Fails (with an error on `op`) otherwise.
using DistributedForm = FailureOr<Value> (*)(Operation *op,
                                             ArrayRef<Value> operands,
                                             shard::GridOp grid,
                                             ArrayRef<shard::GridAxis> axes,
                                             OpBuilder &builder);

/// Softmax and log-softmax over a split axis: the maximum and the sum of
/// exponentials are all-reduced.
FailureOr<Value> distributedSoftmax(Operation *op, ArrayRef<Value> operands,
                                    shard::GridOp grid,
                                    ArrayRef<shard::GridAxis> axes,
                                    OpBuilder &builder);

/// Layer and RMS normalization over split normalized dimensions: the sums
/// of x and of squared deviations (RMS: squares) are all-reduced and
/// divided by the global count; scale and bias are split like those
/// dimensions.
FailureOr<Value> distributedNorm(Operation *op, ArrayRef<Value> operands,
                                 shard::GridOp grid,
                                 ArrayRef<shard::GridAxis> axes,
                                 OpBuilder &builder);

} // namespace mlir::ober

#endif // OBER_LIB_DIALECT_OBER_IR_SHARDINGDISTRIBUTEDFORMS_H
