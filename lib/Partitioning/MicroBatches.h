//===- MicroBatches.h - a stage's micro-batches as loops --------*- C++ -*-===//
//
// Part of Ober-Train. One pipeline stage's share of a micro-batch is built
// once, as units of ops (the micro-batch's samples, its forward and
// backward passes per model chunk, its accumulation); the schedule says in
// which order the units of every micro-batch run. `emitMicroBatches` writes
// that order as code whose size does not grow with the number of
// micro-batches: a stretch of the order that repeats with the micro-batch
// index shifted (1F1B's steady state, its warm-up forwards and cool-down
// backwards, GPipe's forwards) becomes one `scf.for`, and the values a
// unit keeps for a later unit of its micro-batch that runs in another
// iteration (the activations a backward pass reads) wait in a ring of
// `depth` slots (`ober.scatter` into it, `ober.gather` out of it, slot
// micro-batch mod depth), as many as the schedule keeps micro-batches in
// flight.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_PARTITIONING_MICROBATCHES_H
#define OBER_LIB_PARTITIONING_MICROBATCHES_H

#include "Spmd.h"

namespace mlir::ober::partition {

/// One stage's micro-batch, built once on local operands.
struct MicroBatchTemplate {
  /// Blocks of ops without arguments; an op reads values of its own unit,
  /// of units that run before it for the same micro-batch, `index`,
  /// `carried`, or values defined outside every unit.
  SmallVector<Block *> units;
  /// A rank-0 i64 standing for `indexStart + indexStep * micro-batch`
  /// (null when nothing reads it).
  Value index;
  int64_t indexStart = 0, indexStep = 1;
  /// Values carried from one micro-batch to the next (sums, batch-norm
  /// statistics): what a unit reads as `carried[k]` is the value of
  /// `next[k]` after the previous micro-batch, `initial[k]` before the
  /// first.
  SmallVector<Value> carried, initial, next;
};

/// One unit of one micro-batch, in the order they run.
struct UnitRun {
  unsigned unit;
  int64_t micro;
};

/// Writes `order` at the builder's insertion point and returns the carried
/// values after the last micro-batch. Fails with an error at `loc` when the
/// order runs a unit before one it reads, or reads a carried value other
/// than after the previous micro-batch's update. The units are left as
/// they are (the caller erases them).
FailureOr<SmallVector<Value>> emitMicroBatches(OpBuilder &builder, Spmd &spmd,
                                               const MicroBatchTemplate &tmpl,
                                               ArrayRef<UnitRun> order,
                                               Location loc);

} // namespace mlir::ober::partition

#endif // OBER_LIB_PARTITIONING_MICROBATCHES_H
