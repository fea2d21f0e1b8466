//===- Spmd.h - per-device values and the collectives between them -*- C++ -*-===//
//
// Part of Ober-Train. The partitioner rewrites a serial (global) program
// into the program one device of a `shard.grid` runs. Every local value has
// a layout: for each grid axis, whether the devices along it hold the whole
// tensor (replicated), a block of one dimension (split), or addends of it
// (partial, with a reduction kind). `Spmd` keeps those layouts, computes
// local types, and moves a value between layouts with the cheapest
// collective: all-reduce (partial -> replicated), reduce-scatter
// (partial -> split), all-gather (split -> replicated) or a local slice
// (replicated -> split); a split moving to another dimension is an
// all-to-all (gathered and sliced where the local block does not divide).
// `rebuild` clones one serial op onto local operands by its
// rule (`decide`, ShardingDecisions.h).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_PARTITIONING_SPMD_H
#define OBER_LIB_PARTITIONING_SPMD_H

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Dialect/Ober/IR/ShardingDecisions.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

#include <map>

namespace mlir::ober::partition {

class Spmd {
public:
  Spmd(shard::GridOp grid, OpBuilder &builder)
      : grid(grid), shape(grid.getShape()), builder(builder) {}

  unsigned numAxes() const { return shape.size(); }
  int64_t axisSize(unsigned axis) const { return shape[axis]; }
  Layout replicated() const { return Layout(numAxes(), Placement::rep()); }
  shard::GridOp getGrid() const { return grid; }
  OpBuilder &getBuilder() { return builder; }

  /// The layout of local value `v` (replicated when never set).
  Layout layoutOf(Value v) const;
  void setLayout(Value v, const Layout &layout) { layouts[v] = layout; }
  /// Forgets the layout of `v` (a value about to be destroyed).
  void forgetLayout(Value v) { layouts.erase(v); }

  /// The block of `global` one device holds under `layout`.
  RankedTensorType localType(RankedTensorType global,
                             const Layout &layout) const;
  /// The global type of local value `v`.
  RankedTensorType globalTypeOf(Value v) const;

  /// `v` moved to `target` along `axis` (or along every axis). A value
  /// moved before is reused unless `again` (a deliberate second copy).
  Value reshard(Value v, unsigned axis, Placement target, Location loc,
                bool again = false);
  Value reshard(Value v, const Layout &target, Location loc,
                bool again = false);
  /// Forgets the values moved inside `region` (a loop body): what runs
  /// after it moves them again.
  void forgetMovesIn(Region &region);
  /// Forgets the moves of the program's arguments (parameters, state, the
  /// batch): each micro-batch moves them again, as the micro-batch loop's
  /// body does once per iteration.
  void forgetMovesOfArguments();
  /// Forgets everything known of the values `block` defines (layouts,
  /// moves from or to them, statistics), before the block is erased.
  void forgetValuesIn(Block *block);

  /// Clones serial op `op` onto local operands (`map` holds the local value
  /// of each serial value), inserting the collectives its rule asks for.
  /// Records the local results in `map`.
  LogicalResult rebuild(Operation *op, IRMapping &map);

  /// Partial sums along `axis` are completed right after the op that makes
  /// them (Megatron's tensor-parallel regions), instead of at their first
  /// use that needs whole values (data parallelism's gradients, which wait
  /// for their bucket).
  void setEager(unsigned axis) { eager.insert(axis); }
  /// Local SGD along `axis`: a partial sum over its devices completes
  /// without communication, as this device's share times their number
  /// (what the device would compute alone on as many samples like its
  /// own); a partial max or min is this device's.
  void setLocalAxis(unsigned axis) { localAxis = axis; }
  /// With sequence parallelism, an eager completion scatters the tokens
  /// (dimension rank - 2) instead of replicating: a reduce-scatter, with
  /// the all-gather where whole tokens are next needed.
  void setSequenceParallel(unsigned axis) { sequence.insert(axis); }

  /// While set, ops are rebuilt computing in `compute` where the serial
  /// program uses f32 (mixed precision); null restores f32.
  void setComputeType(Type compute) { computeType = compute; }
  /// `type` with f32 elements in the compute type.
  RankedTensorType computed(RankedTensorType type) const;

  /// Row `i` of `table` ([axis size, ...], built here) on the devices at
  /// index `i` along `axis`: how a device learns its block (a local slice,
  /// no communication).
  Value rowOfDevice(unsigned axis, DenseElementsAttr table, Location loc);

  /// A rank-0 constant of `elementType` (replicated).
  Value scalar(Location loc, Type elementType, double value);

  /// `local`, the result of rebuilding serial op `serial`, with partial
  /// sums along the eager axes completed (reduce-scattered over tokens
  /// under sequence parallelism for a matmul that makes an activation).
  Value completeEager(Value local, Operation *serial);

  /// The largest value and the sum of exp(x - largest) over the last
  /// dimension of `x`, split along `axis`, whole (all-reduced); computed
  /// once per value (a cross-entropy's softmax reuses its forward's).
  std::pair<Value, Value> softmaxStatistics(Value x, unsigned axis,
                                            Location loc);

private:
  void localizeAttributes(Operation *local);
  void joinAsShare(Operation *op, SmallVectorImpl<Value> &local);
  void localizeDropout(DropoutOp local, DropoutOp serial, const Layout &layout);
  /// A grouped split moved through a view with each group as a dimension.
  Value grouped(Location loc, Value v, unsigned axis, Placement from,
                Placement to);
  Value move(Value v, unsigned axis, Placement from, Placement target,
             Location loc);
  Value create(Location loc, Value v, unsigned axis, Placement from,
               Placement to);

  shard::GridOp grid;
  SmallVector<int64_t> shape;
  OpBuilder &builder;
  DenseMap<Value, Layout> layouts;
  llvm::SmallDenseSet<unsigned> eager, sequence;
  std::optional<unsigned> localAxis;
  Type computeType;
  DenseMap<Value, std::pair<Value, Value>> statistics;
  /// (value, axis, kind, dimension, reduction, groups) -> the value moved
  /// there.
  std::map<std::tuple<void *, unsigned, int, int64_t, int, int64_t>, Value>
      moved;
};


/// Rebuilds a vocabulary-parallel embedding (a table split by rows), its
/// gradient (each device's block of rows), cross-entropy or softmax (split
/// classes) with Megatron's collectives (Vocabulary.cpp); nullopt when `op`
/// is none of them so placed.
std::optional<LogicalResult> rebuildVocabularyParallel(Spmd &spmd,
                                                       Operation *op,
                                                       IRMapping &map);

/// Rebuilds a training batch norm over split samples with synchronized
/// statistics; nullopt when `op` is not one.
std::optional<LogicalResult> rebuildBatchNorm(Spmd &spmd, Operation *op,
                                              IRMapping &map);

} // namespace mlir::ober::partition

#endif // OBER_LIB_PARTITIONING_SPMD_H
