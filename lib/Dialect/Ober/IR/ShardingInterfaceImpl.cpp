//===- ShardingInterfaceImpl.cpp - ober ops in the shard dialect ----------===//
//
// Part of Ober-Train. External `ShardingInterface` models, so the upstream
// `sharding-propagation` and `shard-partition` passes (and ober's own
// partitioner) understand ober ops: the loop iterators of each op, how its
// operands and results index them, and how to rebuild it on local shards.
//
// Covered so far: elementwise ops (unary, and binary with NumPy
// broadcasting), transpose, reductions without kept dimensions, softmax and
// log-softmax and layer/RMS normalization (distributed along a split
// axis), one_hot, broadcast_to, cross-entropy over split samples, embedding
// with a whole vocabulary, and matmul (batched or with a 2-D weight; a split
// contraction becomes partial sums completed by `shard.all_reduce`). A
// size-1 dimension broadcast against a larger one indexes the constant 0;
// upstream `sharding-propagation` rejects such maps (with an error, on
// that op), broadcasting by rank (a bias) is fine.
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/ShardingInterfaceImpl.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::ober;
using shard::ShardingInterface;

namespace {
int64_t rankOf(Value v) { return cast<RankedTensorType>(v.getType()).getRank(); }

/// An operand of rank k under a result of rank r (NumPy broadcasting): its
/// dimension i is loop r - k + i, or the constant 0 where it broadcasts.
AffineMap broadcastMap(Value operand, RankedTensorType result) {
  MLIRContext *ctx = operand.getContext();
  auto type = cast<RankedTensorType>(operand.getType());
  int64_t r = result.getRank(), k = type.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < k; ++i) {
    int64_t loop = r - k + i;
    bool broadcast = type.getDimSize(i) == 1 && result.getDimSize(loop) != 1;
    exprs.push_back(broadcast ? getAffineConstantExpr(0, ctx)
                              : getAffineDimExpr(loop, ctx));
  }
  return AffineMap::get(r, 0, exprs, ctx);
}

/// One parallel loop per dimension of the op's first result.
SmallVector<utils::IteratorType> parallelLoops(Operation *op) {
  return SmallVector<utils::IteratorType>(rankOf(op->getResult(0)),
                                          utils::IteratorType::parallel);
}

/// A model whose op is rebuilt on local shards as it is (one parallel loop
/// per result dimension, nothing to communicate).
template <typename Derived, typename Op>
struct TriviallyPartitioned
    : public ShardingInterface::ExternalModel<Derived, Op> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return parallelLoops(op);
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<shard::Sharding> operandShardings,
                          ArrayRef<shard::Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    shard::partitionTriviallyShardableOperation(
        *op, partitionedOperands, operandShardings, resultShardings,
        partitionMap, symbolTable, builder);
    return success();
  }
};

/// Whether two shardings split the `rank` dimensions of a tensor alike.
bool splitAlike(const shard::Sharding &a, const shard::Sharding &b,
                int64_t rank) {
  auto axesOf = [](const shard::Sharding &s, int64_t d) {
    ArrayRef<shard::GridAxesAttr> split = s.getSplitAxes();
    return d < static_cast<int64_t>(split.size()) ? split[d].asArrayRef()
                                                  : ArrayRef<int16_t>();
  };
  for (int64_t d = 0; d < rank; ++d)
    if (axesOf(a, d) != axesOf(b, d))
      return false;
  return true;
}

/// Where an op's loops live: the grid of its result sharding and the grid
/// axes that split each loop.
struct Placement {
  shard::GridOp grid;
  shard::ShardingArray axes;
};

FailureOr<Placement> placementOf(Operation *op,
                                 ArrayRef<utils::IteratorType> iterators,
                                 ArrayRef<AffineMap> maps,
                                 ArrayRef<shard::Sharding> operandShardings,
                                 ArrayRef<shard::Sharding> resultShardings,
                                 SymbolTableCollection &symbolTable) {
  shard::GridOp grid =
      shard::getGrid(op, resultShardings.front().getGridAttr(), symbolTable);
  if (!grid)
    return op->emitError("no shard.grid for the result sharding");
  return Placement{grid, shard::getGridAxisAssignmentForLoopIterators(
                             operandShardings, resultShardings, iterators,
                             maps)};
}

/// A 0-D constant of `type`'s element type.
Value scalarOf(OpBuilder &builder, Location loc, RankedTensorType type,
               double value) {
  auto scalar = RankedTensorType::get({}, type.getElementType());
  return ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(scalar,
                             builder.getFloatAttr(type.getElementType(), value)));
}

/// Completes the partial results `value` over grid `axes` with `kind`; a
/// mean is then divided by the number of parts.
Value completePartial(OpBuilder &builder, Location loc, Value value,
                      shard::GridOp grid, ArrayRef<shard::GridAxis> axes,
                      shard::ReductionKind kind, bool mean) {
  value = shard::AllReduceOp::create(builder, loc, value, grid.getSymName(),
                                     axes, kind);
  if (!mean)
    return value;
  int64_t parts = 1;
  for (shard::GridAxis a : axes)
    parts *= grid.getShape()[a];
  return MulOp::create(
      builder, loc, value,
      scalarOf(builder, loc, cast<RankedTensorType>(value.getType()),
               1.0 / parts));
}

/// Records `value` as the partitioned result of single-result `op`.
LogicalResult partitioned(Operation *op, Value value, IRMapping &partitionMap) {
  partitionMap.map(op->getResult(0), value);
  partitionMap.map(op, value.getDefiningOp());
  return success();
}

/// Elementwise ops with broadcasting: one parallel loop per result
/// dimension.
template <typename Op>
struct BroadcastElementwiseSharding
    : public TriviallyPartitioned<BroadcastElementwiseSharding<Op>, Op> {
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto result = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<AffineMap> maps;
    for (Value v : op->getOperands())
      maps.push_back(broadcastMap(v, result));
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      maps.push_back(
          AffineMap::getMultiDimIdentityMap(result.getRank(), op->getContext()));
    return maps;
  }

};

/// `C[b..., m, n] = sum_k A[b..., m, k] * B[b..., k, n]`: the result's
/// dimensions are parallel loops, the contraction a sum loop after them.
struct MatmulSharding
    : public ShardingInterface::ExternalModel<MatmulSharding, MatmulOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    auto m = cast<MatmulOp>(op);
    if (rankOf(m.getLhs()) < 2 || rankOf(m.getRhs()) < 2)
      return {};
    SmallVector<utils::IteratorType> types(rankOf(m.getResult()),
                                           utils::IteratorType::parallel);
    types.push_back(utils::IteratorType::reduction);
    return types;
  }

  SmallVector<shard::ReductionKind>
  getReductionLoopIteratorKinds(Operation *op) const {
    return {shard::ReductionKind::Sum};
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto m = cast<MatmulOp>(op);
    MLIRContext *ctx = op->getContext();
    int64_t ra = rankOf(m.getLhs()), rb = rankOf(m.getRhs());
    if (ra < 2 || rb < 2)
      return {};
    auto result = cast<RankedTensorType>(m.getResult().getType());
    int64_t r = result.getRank();
    auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
    // Batch dimensions broadcast like an elementwise op's.
    auto batch = [&](Value v, int64_t rank) {
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<AffineExpr> exprs;
      for (int64_t i = 0; i + 2 < rank; ++i) {
        int64_t loop = r - rank + i;
        bool broadcast = type.getDimSize(i) == 1 && result.getDimSize(loop) != 1;
        exprs.push_back(broadcast ? getAffineConstantExpr(0, ctx) : dim(loop));
      }
      return exprs;
    };
    SmallVector<AffineExpr> lhs = batch(m.getLhs(), ra);
    lhs.append({dim(r - 2), dim(r)});
    SmallVector<AffineExpr> rhs = batch(m.getRhs(), rb);
    rhs.append({dim(r), dim(r - 1)});
    return {AffineMap::get(r + 1, 0, lhs, ctx), AffineMap::get(r + 1, 0, rhs, ctx),
            AffineMap::get(r + 1, 0,
                           AffineMap::getMultiDimIdentityMap(r, ctx).getResults(),
                           ctx)};
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<shard::Sharding> operandShardings,
                          ArrayRef<shard::Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    auto m = cast<MatmulOp>(op);
    SmallVector<utils::IteratorType> iterators = getLoopIteratorTypes(op);
    if (iterators.empty())
      return op->emitError("sharding a matmul of a vector is not supported");
    FailureOr<Placement> at =
        placementOf(op, iterators, getIndexingMaps(op), operandShardings,
                    resultShardings, symbolTable);
    if (failed(at))
      return failure();
    auto [grid, axes] = *at;
    Type local = shard::shardType(m.getResult().getType(), grid,
                                  resultShardings.front());
    Value value = MatmulOp::create(builder, op->getLoc(), local,
                                   partitionedOperands[0],
                                   partitionedOperands[1]);
    // A split contraction leaves partial sums on each device.
    SmallVector<shard::GridAxis> reduce =
        shard::getReductionGridAxes(iterators, axes);
    if (!reduce.empty())
      value = shard::AllReduceOp::create(builder, op->getLoc(), value,
                                         grid.getSymName(), reduce,
                                         shard::ReductionKind::Sum);
    return partitioned(op, value, partitionMap);
  }
};

/// `out[p(i)] = in[i]`: one parallel loop per result dimension.
struct TransposeSharding
    : public TriviallyPartitioned<TransposeSharding, TransposeOp> {
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto t = cast<TransposeOp>(op);
    MLIRContext *ctx = op->getContext();
    ArrayRef<int64_t> perm = t.getPermutation();
    int64_t r = static_cast<int64_t>(perm.size());
    // Result dimension j reads input dimension perm[j].
    SmallVector<AffineExpr> in(r);
    for (int64_t j = 0; j < r; ++j)
      in[perm[j]] = getAffineDimExpr(j, ctx);
    return {AffineMap::get(r, 0, in, ctx),
            AffineMap::getMultiDimIdentityMap(r, ctx)};
  }

};

/// Reductions over `axes` without kept dimensions: input dimensions are
/// loops, the reduced ones reduction loops. A split reduced dimension
/// leaves partial results, completed by an all-reduce of the matching
/// kind (a mean also divides by the number of parts).
template <typename Op, shard::ReductionKind Kind, bool Mean = false>
struct ReduceSharding
    : public ShardingInterface::ExternalModel<ReduceSharding<Op, Kind, Mean>,
                                              Op> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    auto red = cast<Op>(op);
    if (red.getKeepdims())
      return {};
    SmallVector<utils::IteratorType> types(rankOf(red.getInput()),
                                           utils::IteratorType::parallel);
    for (int64_t a : red.getAxes())
      types[a] = utils::IteratorType::reduction;
    return types;
  }

  SmallVector<shard::ReductionKind>
  getReductionLoopIteratorKinds(Operation *op) const {
    return SmallVector<shard::ReductionKind>(cast<Op>(op).getAxes().size(),
                                             Kind);
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto red = cast<Op>(op);
    if (red.getKeepdims())
      return {};
    MLIRContext *ctx = op->getContext();
    int64_t r = rankOf(red.getInput());
    SmallVector<AffineExpr> out;
    for (int64_t d = 0; d < r; ++d)
      if (!llvm::is_contained(red.getAxes(), d))
        out.push_back(getAffineDimExpr(d, ctx));
    return {AffineMap::getMultiDimIdentityMap(r, ctx),
            AffineMap::get(r, 0, out, ctx)};
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<shard::Sharding> operandShardings,
                          ArrayRef<shard::Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    auto red = cast<Op>(op);
    if (red.getKeepdims())
      return op->emitError("sharding a reduction with kept dimensions is not "
                           "supported yet");
    FailureOr<Placement> at =
        placementOf(op, getLoopIteratorTypes(op), getIndexingMaps(op),
                    operandShardings, resultShardings, symbolTable);
    if (failed(at))
      return failure();
    auto [grid, axes] = *at;
    SmallVector<shard::GridAxis> reduce =
        shard::getReductionGridAxes(getLoopIteratorTypes(op), axes);
    Type local = shard::shardType(red.getResult().getType(), grid,
                                  resultShardings.front());
    Value value = Op::create(builder, op->getLoc(), local,
                             partitionedOperands[0], red.getAxesAttr(),
                             red.getKeepdimsAttr());
    if (!reduce.empty())
      value = completePartial(builder, op->getLoc(), value, grid, reduce, Kind,
                              Mean);
    return partitioned(op, value, partitionMap);
  }
};

/// Softmax and log-softmax along `axis`: every dimension is a parallel loop
/// (the result splits like the input). Along a split axis the partition
/// computes the distributed form: the maximum and the sum of exponentials
/// are all-reduced over the axis's grid axes.
template <typename Op, bool Log>
struct SoftmaxSharding
    : public ShardingInterface::ExternalModel<SoftmaxSharding<Op, Log>, Op> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return parallelLoops(op);
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    int64_t r = rankOf(op->getResult(0));
    return {AffineMap::getMultiDimIdentityMap(r, op->getContext()),
            AffineMap::getMultiDimIdentityMap(r, op->getContext())};
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<shard::Sharding> operandShardings,
                          ArrayRef<shard::Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    auto s = cast<Op>(op);
    FailureOr<Placement> at =
        placementOf(op, getLoopIteratorTypes(op), getIndexingMaps(op),
                    operandShardings, resultShardings, symbolTable);
    if (failed(at))
      return failure();
    auto [grid, axes] = *at;
    int64_t axis = s.getAxis();
    if (axes[axis].empty()) {
      shard::partitionTriviallyShardableOperation(
          *op, partitionedOperands, operandShardings, resultShardings,
          partitionMap, symbolTable, builder);
      return success();
    }
    if (!splitAlike(operandShardings.front(), resultShardings.front(),
                    rankOf(op->getResult(0))))
      return op->emitError("the input and result of a softmax over a split "
                           "axis must be split alike");
    Location loc = op->getLoc();
    Value x = partitionedOperands.front();
    auto along = builder.getDenseI64ArrayAttr({axis});
    auto keep = builder.getBoolAttr(true);
    StringRef gridName = grid.getSymName();
    Value max = ReduceMaxOp::create(builder, loc, x, along, keep);
    max = shard::AllReduceOp::create(builder, loc, max, gridName, axes[axis],
                                     shard::ReductionKind::Max);
    Value shifted = SubOp::create(builder, loc, x, max);
    Value exp = ExpOp::create(builder, loc, shifted);
    Value sum = ReduceSumOp::create(builder, loc, exp, along, keep);
    sum = shard::AllReduceOp::create(builder, loc, sum, gridName, axes[axis],
                                     shard::ReductionKind::Sum);
    Value result =
        Log ? SubOp::create(builder, loc, shifted, LogOp::create(builder, loc, sum))
                  .getResult()
            : DivOp::create(builder, loc, exp, sum).getResult();
    return partitioned(op, result, partitionMap);
  }
};

/// Layer and RMS normalization over `[axis, rank)`: every dimension is a
/// parallel loop, scale and bias follow the normalized ones. With a
/// normalized dimension split, the statistics are all-reduced (sums of x
/// and of squared deviations, divided by the global count).
template <typename Op, bool RMS>
struct NormSharding
    : public ShardingInterface::ExternalModel<NormSharding<Op, RMS>, Op> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return parallelLoops(op);
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto n = cast<Op>(op);
    MLIRContext *ctx = op->getContext();
    int64_t r = rankOf(n.getInput()), axis = n.getAxis();
    SmallVector<AffineExpr> trailing;
    for (int64_t d = axis; d < r; ++d)
      trailing.push_back(getAffineDimExpr(d, ctx));
    SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(r, ctx)};
    for (unsigned i = 1; i < op->getNumOperands(); ++i)
      maps.push_back(AffineMap::get(r, 0, trailing, ctx));
    maps.push_back(AffineMap::getMultiDimIdentityMap(r, ctx));
    return maps;
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<shard::Sharding> operandShardings,
                          ArrayRef<shard::Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    auto n = cast<Op>(op);
    FailureOr<Placement> at =
        placementOf(op, getLoopIteratorTypes(op), getIndexingMaps(op),
                    operandShardings, resultShardings, symbolTable);
    if (failed(at))
      return failure();
    auto [grid, axes] = *at;
    int64_t r = rankOf(n.getInput()), axis = n.getAxis();
    SmallVector<shard::GridAxis> group;
    SmallVector<int64_t> normalized;
    double count = 1;
    for (int64_t d = axis; d < r; ++d) {
      normalized.push_back(d);
      count *= cast<RankedTensorType>(n.getInput().getType()).getDimSize(d);
      llvm::append_range(group, axes[d]);
    }
    if (group.empty()) {
      shard::partitionTriviallyShardableOperation(
          *op, partitionedOperands, operandShardings, resultShardings,
          partitionMap, symbolTable, builder);
      return success();
    }
    // The distributed form keeps the input's split: the result and the
    // scale and bias must be split the same way.
    Location loc = op->getLoc();
    Value x = partitionedOperands.front();
    auto type = cast<RankedTensorType>(x.getType());
    if (!splitAlike(operandShardings.front(), resultShardings.front(), r))
      return op->emitError("the input and result of a normalization over a "
                           "split dimension must be split alike");
    for (Value v : ArrayRef<Value>(partitionedOperands).drop_front())
      if (cast<RankedTensorType>(v.getType()).getShape() !=
          type.getShape().drop_front(axis))
        return op->emitError("scale and bias must be split like the "
                             "normalized dimensions");
    auto dims = builder.getDenseI64ArrayAttr(normalized);
    auto keep = builder.getBoolAttr(true);
    StringRef gridName = grid.getSymName();
    auto globalMean = [&](Value v) {
      Value sum = ReduceSumOp::create(builder, loc, v, dims, keep);
      sum = shard::AllReduceOp::create(builder, loc, sum, gridName, group,
                                       shard::ReductionKind::Sum);
      return MulOp::create(builder, loc, sum,
                           scalarOf(builder, loc, type, 1.0 / count))
          .getResult();
    };
    Value centered = x;
    if (!RMS)
      centered = SubOp::create(builder, loc, x, globalMean(x));
    Value var = globalMean(MulOp::create(builder, loc, centered, centered));
    Value inv = RsqrtOp::create(
        builder, loc,
        AddOp::create(builder, loc, var,
                      scalarOf(builder, loc, type,
                               n.getEpsilon().convertToDouble())));
    Value y = MulOp::create(builder, loc, centered, inv);
    // Scale (and bias) are split like the normalized dimensions.
    unsigned next = 1;
    if (n.getScale())
      y = MulOp::create(builder, loc, y, partitionedOperands[next++]);
    if constexpr (!RMS)
      if (n.getBias())
        y = AddOp::create(builder, loc, y, partitionedOperands[next++]);
    return partitioned(op, y, partitionMap);
  }
};

/// `one_hot`: one parallel loop per result dimension; the indices read all
/// but the inserted one, which must stay whole.
struct OneHotSharding
    : public TriviallyPartitioned<OneHotSharding, OneHotOp> {
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto o = cast<OneHotOp>(op);
    MLIRContext *ctx = op->getContext();
    int64_t r = rankOf(o.getResult()), axis = o.getAxis();
    SmallVector<AffineExpr> in;
    for (int64_t d = 0; d < r; ++d)
      if (d != axis)
        in.push_back(getAffineDimExpr(d, ctx));
    return {AffineMap::get(r, 0, in, ctx),
            AffineMap::getMultiDimIdentityMap(r, ctx)};
  }
};

/// `broadcast_to` from a scalar or a tensor broadcast by rank: its
/// dimensions line up with the result's trailing ones.
struct BroadcastToSharding
    : public TriviallyPartitioned<BroadcastToSharding, BroadcastToOp> {
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto result = cast<RankedTensorType>(op->getResult(0).getType());
    return {broadcastMap(op->getOperand(0), result),
            AffineMap::getMultiDimIdentityMap(result.getRank(),
                                              op->getContext())};
  }
};

/// Cross-entropy over the last (class) dimension: the sample dimensions are
/// parallel loops with `reduction = none` and sum loops otherwise; classes
/// are a sum loop. Split samples give partial sums (means are divided by
/// the parts); split classes are not supported yet.
struct CrossEntropySharding
    : public ShardingInterface::ExternalModel<CrossEntropySharding,
                                              CrossEntropyOp> {
  static bool perSample(CrossEntropyOp ce) {
    return ce.getReduction() == LossReduction::none;
  }

  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    auto ce = cast<CrossEntropyOp>(op);
    int64_t r = rankOf(ce.getLogits());
    SmallVector<utils::IteratorType> types(
        r, perSample(ce) ? utils::IteratorType::parallel
                         : utils::IteratorType::reduction);
    types.back() = utils::IteratorType::reduction;
    return types;
  }

  SmallVector<shard::ReductionKind>
  getReductionLoopIteratorKinds(Operation *op) const {
    auto ce = cast<CrossEntropyOp>(op);
    int64_t loops = perSample(ce) ? 1 : rankOf(ce.getLogits());
    return SmallVector<shard::ReductionKind>(loops, shard::ReductionKind::Sum);
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto ce = cast<CrossEntropyOp>(op);
    MLIRContext *ctx = op->getContext();
    int64_t r = rankOf(ce.getLogits());
    SmallVector<AffineExpr> samples;
    for (int64_t d = 0; d + 1 < r; ++d)
      samples.push_back(getAffineDimExpr(d, ctx));
    AffineMap logits = AffineMap::getMultiDimIdentityMap(r, ctx);
    AffineMap targets = rankOf(ce.getTargets()) == r
                            ? logits
                            : AffineMap::get(r, 0, samples, ctx);
    AffineMap result = perSample(ce) ? AffineMap::get(r, 0, samples, ctx)
                                     : AffineMap::get(r, 0, {}, ctx);
    return {logits, targets, result};
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<shard::Sharding> operandShardings,
                          ArrayRef<shard::Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    auto ce = cast<CrossEntropyOp>(op);
    FailureOr<Placement> at =
        placementOf(op, getLoopIteratorTypes(op), getIndexingMaps(op),
                    operandShardings, resultShardings, symbolTable);
    if (failed(at))
      return failure();
    auto [grid, axes] = *at;
    if (!axes.back().empty())
      return op->emitError("cross-entropy over split classes is not "
                           "supported yet");
    SmallVector<shard::GridAxis> samples;
    for (unsigned d = 0; d + 1 < axes.size(); ++d)
      llvm::append_range(samples, axes[d]);
    if (ce.getReduction() == LossReduction::mean && !samples.empty() &&
        ce.getIgnoreIndex())
      return op->emitError("a mean cross-entropy with ignore_index over split "
                           "samples is not supported yet");
    Type local = perSample(ce) ? shard::shardType(ce.getResult().getType(),
                                                  grid, resultShardings.front())
                               : ce.getResult().getType();
    Location loc = op->getLoc();
    Value value = CrossEntropyOp::create(
        builder, loc, local, partitionedOperands[0], partitionedOperands[1],
        ce.getReductionAttr(), ce.getLabelSmoothingAttr(),
        ce.getIgnoreIndexAttr());
    if (!perSample(ce) && !samples.empty())
      value = completePartial(builder, loc, value, grid, samples,
                              shard::ReductionKind::Sum,
                              ce.getReduction() == LossReduction::mean);
    return partitioned(op, value, partitionMap);
  }
};

/// `embedding`: the result dimensions are parallel loops (indices read all
/// but the last, the table its columns) and the vocabulary a sum loop over
/// the table's rows: a lookup is a sum of one-hot rows, so a split
/// vocabulary would give partial sums. Only unsplit vocabularies are
/// partitioned so far (split indices or columns stay local).
struct EmbeddingSharding
    : public ShardingInterface::ExternalModel<EmbeddingSharding, EmbeddingOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    SmallVector<utils::IteratorType> types(rankOf(op->getResult(0)),
                                           utils::IteratorType::parallel);
    types.push_back(utils::IteratorType::reduction);
    return types;
  }

  SmallVector<shard::ReductionKind>
  getReductionLoopIteratorKinds(Operation *op) const {
    return {shard::ReductionKind::Sum};
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    MLIRContext *ctx = op->getContext();
    int64_t r = rankOf(op->getResult(0));
    SmallVector<AffineExpr> indices;
    for (int64_t d = 0; d + 1 < r; ++d)
      indices.push_back(getAffineDimExpr(d, ctx));
    return {AffineMap::get(r + 1, 0,
                           {getAffineDimExpr(r, ctx), getAffineDimExpr(r - 1, ctx)},
                           ctx),
            AffineMap::get(r + 1, 0, indices, ctx),
            AffineMap::get(r + 1, 0,
                           AffineMap::getMultiDimIdentityMap(r, ctx).getResults(),
                           ctx)};
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<shard::Sharding> operandShardings,
                          ArrayRef<shard::Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    FailureOr<Placement> at =
        placementOf(op, getLoopIteratorTypes(op), getIndexingMaps(op),
                    operandShardings, resultShardings, symbolTable);
    if (failed(at))
      return failure();
    auto [grid, axes] = *at;
    if (!axes.back().empty())
      return op->emitError("an embedding with a split vocabulary is not "
                           "supported yet");
    Type local = shard::shardType(op->getResult(0).getType(), grid,
                                  resultShardings.front());
    Value value = EmbeddingOp::create(builder, op->getLoc(), local,
                                      partitionedOperands[0],
                                      partitionedOperands[1]);
    return partitioned(op, value, partitionMap);
  }
};

template <typename... Ops>
void attachElementwise(MLIRContext *ctx) {
  (Ops::template attachInterface<BroadcastElementwiseSharding<Ops>>(*ctx), ...);
}
} // namespace

void mlir::ober::registerShardingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, OberDialect *) {
    attachElementwise<
        // Unary.
        NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp, SigmoidOp, ReluOp,
        SiluOp, ErfOp, ReciprocalOp, SinOp, CosOp, TanOp, AsinOp, AcosOp,
        AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, FloorOp, CeilOp,
        RoundOp, SignOp, NotOp, GeluOp, CastOp,
        // Binary, with broadcasting.
        AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, RemOp, AndOp, OrOp,
        XorOp, CompareOp, SelectOp>(ctx);
    MatmulOp::attachInterface<MatmulSharding>(*ctx);
    TransposeOp::attachInterface<TransposeSharding>(*ctx);
    SoftmaxOp::attachInterface<SoftmaxSharding<SoftmaxOp, false>>(*ctx);
    LogSoftmaxOp::attachInterface<SoftmaxSharding<LogSoftmaxOp, true>>(*ctx);
    LayerNormOp::attachInterface<NormSharding<LayerNormOp, false>>(*ctx);
    RMSNormOp::attachInterface<NormSharding<RMSNormOp, true>>(*ctx);
    OneHotOp::attachInterface<OneHotSharding>(*ctx);
    BroadcastToOp::attachInterface<BroadcastToSharding>(*ctx);
    CrossEntropyOp::attachInterface<CrossEntropySharding>(*ctx);
    EmbeddingOp::attachInterface<EmbeddingSharding>(*ctx);
    ReduceSumOp::attachInterface<
        ReduceSharding<ReduceSumOp, shard::ReductionKind::Sum>>(*ctx);
    ReduceMeanOp::attachInterface<
        ReduceSharding<ReduceMeanOp, shard::ReductionKind::Sum, true>>(*ctx);
    ReduceMaxOp::attachInterface<
        ReduceSharding<ReduceMaxOp, shard::ReductionKind::Max>>(*ctx);
    ReduceMinOp::attachInterface<
        ReduceSharding<ReduceMinOp, shard::ReductionKind::Min>>(*ctx);
  });
}
