//===- ShardingDecisions.h - how one op runs on split operands -*- C++ -*-===//
//
// Part of Ober-Train. A value's placement along one axis of a device grid
// (whole, a block of one dimension, or addends), and `decide`: how an op is
// placed along an axis given its operands' placements, read from the
// sharding rule table (ShardingRules.h). The partitioner rebuilds ops by
// it and the planner prices by it.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_SHARDINGDECISIONS_H
#define OBER_DIALECT_OBER_IR_SHARDINGDECISIONS_H

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Operation.h"

namespace mlir::ober {

/// How the devices along one grid axis hold a value: each the whole tensor
/// (replicated), a block of dimension `dim` (split), or addends of it
/// (partial, combined by `reduction`).
struct Placement {
  enum Kind : uint8_t { Replicated, Split, Partial };
  Kind kind = Replicated;
  int64_t dim = -1;
  shard::ReductionKind reduction = shard::ReductionKind::Sum;
  /// A split dimension made of `groups` equal groups (a fused QKV weight's
  /// columns): each device holds its block of every group.
  int64_t groups = 1;

  static Placement rep() { return {}; }
  static Placement split(int64_t d, int64_t groups = 1) {
    return {Split, d, shard::ReductionKind::Sum, groups};
  }
  static Placement partial(shard::ReductionKind k = shard::ReductionKind::Sum) {
    return {Partial, -1, k, 1};
  }
  /// The same split on another dimension.
  Placement on(int64_t d) const { return split(d, groups); }
  bool isRep() const { return kind == Replicated; }
  bool isSplit() const { return kind == Split; }
  bool isGrouped() const { return kind == Split && groups > 1; }
  bool isPartial() const { return kind == Partial; }
  bool isPartialSum() const {
    return kind == Partial && reduction == shard::ReductionKind::Sum;
  }
  bool operator==(const Placement &o) const {
    return kind == o.kind && (kind != Split || (dim == o.dim && groups == o.groups)) &&
           (kind != Partial || reduction == o.reduction);
  }
  bool operator!=(const Placement &o) const { return !(*this == o); }
};

/// One placement per grid axis.
using Layout = SmallVector<Placement, 2>;

/// How one op is placed along one grid axis: what each operand must be,
/// what each result is, and which results are local means to be divided by
/// the axis size (making partial sums).
struct AxisDecision {
  SmallVector<Placement> operands, results;
  SmallVector<bool> divideResult;
};

/// How `op` is placed along an axis of `parts` devices, given its operands'
/// placements and the serial (global) operand and result types. Ops without
/// a rule run on whole operands (replicated), which is always correct.
AxisDecision decide(Operation *op, ArrayRef<Placement> operands,
                    int64_t parts);

/// `v` is zeros (a splat zero constant, possibly broadcast).
bool isZeros(Value v);

/// Whether `op`, a softmax or cross-entropy, has a form over classes (the
/// last dimension of its first operand) split across devices, all-reducing
/// its statistics (Megatron's vocabulary-parallel cross-entropy): a
/// softmax over its last dimension, a cross-entropy with integer targets
/// and no ignored index.
bool runsOverSplitClasses(Operation *op);

/// The groups a split of parameter `arg` along `dim` over `parts` devices
/// should have: when the matmul output (and bias sum) it flows into is
/// sliced along the split dimension into equal pieces (a fused QKV
/// projection's query, key and value), each device holds its block of
/// every piece, so the pieces stay split; 1 otherwise.
int64_t sliceGroups(BlockArgument arg, int64_t dim, int64_t parts);

} // namespace mlir::ober

#endif // OBER_DIALECT_OBER_IR_SHARDINGDECISIONS_H
