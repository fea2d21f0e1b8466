//===- ShardingInterfaceImpl.cpp - ShardingInterface from the rule table --===//
//
// Part of Ober-Train. External `ShardingInterface` models, so the upstream
// `sharding-propagation` and `shard-partition` passes understand ober ops,
// generated from the sharding rule table (ShardingRules.h): one loop per
// factor (a reduction loop for a factor no result holds) and one more per
// size-1 dimension without a factor (upstream wants every result dimension
// indexed by a loop); a dimension of several factors (a reshape's merged
// dimension) is indexed by its major factor's loop. `partition` rebuilds
// the op on local blocks: parallel splits need nothing, split reductions
// are all-reduced with their kind (a mean divided by the parts; refused
// where an operand is added to the reduced result), a split
// statistics factor runs the op's distributed form (softmax, layer and RMS
// norm), and any other split (needing replication, a halo, index shifts,
// a minor factor) is refused with an error on the op.
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/ShardingInterfaceImpl.h"

#include "ShardingDistributedForms.h"

#include "ober/Dialect/Ober/IR/OberBuilders.h"
#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Dialect/Ober/IR/ShardingRules.h"

#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::ober;
using shard::ShardingInterface;

namespace {
/// The upstream view of an op's rule.
struct Loops {
  ShardingRule rule;
  SmallVector<utils::IteratorType> iterators;
  SmallVector<shard::ReductionKind> reductionKinds;
  SmallVector<AffineMap> maps;
};

/// The loops and indexing maps of `op`'s rule; nullopt without one.
std::optional<Loops> loopsOf(Operation *op) {
  std::optional<ShardingRule> rule = getShardingRule(op);
  if (!rule)
    return std::nullopt;
  MLIRContext *ctx = op->getContext();
  Loops loops{*rule, {}, {}, {}};
  for (auto [f, factor] : llvm::enumerate(rule->factors)) {
    bool reduced = factor.kind == FactorKind::Reduction || !rule->inResults(f);
    loops.iterators.push_back(reduced ? utils::IteratorType::reduction
                                      : utils::IteratorType::parallel);
    if (reduced)
      loops.reductionKinds.push_back(factor.reduction);
  }
  SmallVector<SmallVector<AffineExpr>> exprs;
  auto addTensor = [&](const TensorMapping &tensor) {
    SmallVector<AffineExpr> &out = exprs.emplace_back();
    for (const DimMapping &dim : tensor) {
      if (!dim.empty()) {
        out.push_back(getAffineDimExpr(dim.front(), ctx));
        continue;
      }
      out.push_back(getAffineDimExpr(loops.iterators.size(), ctx));
      loops.iterators.push_back(utils::IteratorType::parallel);
    }
  };
  llvm::for_each(rule->operands, addTensor);
  llvm::for_each(rule->results, addTensor);
  for (ArrayRef<AffineExpr> e : exprs)
    loops.maps.push_back(AffineMap::get(loops.iterators.size(), 0, e, ctx));
  return loops;
}

/// The grid axes of the split reduction factors, with their kind and
/// whether they make means; fails (with an error) when `op` cannot be
/// rebuilt locally for the splits in `axes` (one entry per loop).
struct Splits {
  SmallVector<shard::GridAxis> reduced, statistics;
  shard::ReductionKind kind = shard::ReductionKind::Sum;
  bool mean = false;
};

FailureOr<Splits> splitsOf(Operation *op, const ShardingRule &rule,
                           const shard::ShardingArray &axes) {
  Splits splits;
  auto refuse = [&](unsigned f, StringRef why) {
    return op->emitError("shard-partition: a split of factor ")
           << f << " (size " << rule.factors[f].size << ") " << why;
  };
  for (unsigned f = 0; f < rule.factors.size(); ++f) {
    const ShardingFactor &factor = rule.factors[f];
    if (f >= axes.size() || axes[f].empty())
      continue;
    auto isMinor = [&](const TensorMapping &t) {
      return ShardingRule::dimOf(t, f) >= 0 && !ShardingRule::isMajor(t, f);
    };
    if (llvm::any_of(rule.operands, isMinor) ||
        llvm::any_of(rule.results, isMinor))
      return refuse(f, "is not a block of its dimension");
    if (factor.indexed)
      return refuse(f, "needs its indices shifted and masked");
    switch (factor.kind) {
    case FactorKind::Parallel:
      break;
    case FactorKind::Reduction:
      if (!splits.reduced.empty() && factor.reduction != splits.kind)
        return refuse(f, "mixes reduction kinds");
      llvm::append_range(splits.reduced, axes[f]);
      splits.kind = factor.reduction;
      splits.mean |= factor.mean;
      break;
    case FactorKind::Statistics:
      llvm::append_range(splits.statistics, axes[f]);
      break;
    case FactorKind::NeedReplication:
      return refuse(f, "needs the whole factor");
    case FactorKind::Permutation:
      return refuse(f, "needs elements of neighbouring blocks");
    }
  }
  return splits;
}

/// Completes partial results over the reduced grid axes; a mean is then
/// divided by the number of parts.
Value complete(OpBuilder &builder, Location loc, Value value,
               shard::GridOp grid, const Splits &splits) {
  value = shard::AllReduceOp::create(builder, loc, value, grid.getSymName(),
                                     splits.reduced, splits.kind);
  if (!splits.mean)
    return value;
  int64_t parts = 1;
  for (shard::GridAxis a : splits.reduced)
    parts *= grid.getShape()[a];
  return MulOp::create(builder, loc, value,
                       createScalarConstant(
                           builder, loc, getElementTypeOrSelf(value.getType()),
                           1.0 / parts));
}

/// The number of blocks each dimension of `value` is split into.
SmallVector<int64_t> partsOf(Value value, shard::GridOp grid,
                             const shard::Sharding &sharding) {
  SmallVector<int64_t> parts(cast<RankedTensorType>(value.getType()).getRank(),
                             1);
  for (auto [d, axes] : llvm::enumerate(sharding.getSplitAxes()))
    for (shard::GridAxis axis : axes.asArrayRef())
      parts[d] *= grid.getShape()[axis];
  return parts;
}

/// Clones `op` onto its local operands with local attributes and result
/// types; fails when the op does not accept them.
FailureOr<Operation *> cloneLocally(Operation *op, shard::GridOp grid,
                                    ArrayRef<shard::Sharding> operandShardings,
                                    ArrayRef<shard::Sharding> resultShardings,
                                    IRMapping &partitionMap,
                                    OpBuilder &builder) {
  Operation *local = builder.clone(*op, partitionMap);
  if (operandShardings.front())
    localizeAttributes(
        local, partsOf(op->getOperand(0), grid, operandShardings.front()));
  for (auto [result, sharding] :
       llvm::zip_equal(local->getResults(), resultShardings))
    result.setType(shard::shardType(result.getType(), grid, sharding));
  auto infer = dyn_cast<InferTypeOpInterface>(local);
  SmallVector<Type> inferred;
  if (infer && (failed(infer.inferReturnTypes(
                    local->getContext(), local->getLoc(), local->getOperands(),
                    local->getAttrDictionary(), local->getPropertiesStorage(),
                    local->getRegions(), inferred)) ||
                TypeRange(inferred) != local->getResultTypes())) {
    local->erase();
    return op->emitError("shard-partition: the local op does not accept its "
                         "local types");
  }
  return local;
}

/// Rebuilds `op` on local shards by its rule; `form` builds the op split on
/// a statistics factor (null: such splits are refused).
LogicalResult partitionByRule(Operation *op,
                              ArrayRef<Value> partitionedOperands,
                              ArrayRef<shard::Sharding> operandShardings,
                              ArrayRef<shard::Sharding> resultShardings,
                              IRMapping &partitionMap,
                              SymbolTableCollection &symbolTable,
                              OpBuilder &builder, DistributedForm form) {
  std::optional<Loops> loops = loopsOf(op);
  if (!loops)
    return op->emitError("shard-partition: no sharding rule for this op");
  shard::GridOp grid =
      shard::getGrid(op, resultShardings.front().getGridAttr(), symbolTable);
  if (!grid)
    return op->emitError("no shard.grid for the result sharding");
  shard::ShardingArray axes = shard::getGridAxisAssignmentForLoopIterators(
      operandShardings, resultShardings, loops->iterators, loops->maps);
  FailureOr<Splits> splits = splitsOf(op, loops->rule, axes);
  if (failed(splits))
    return failure();
  if (!splits->reduced.empty() && !loops->rule.addedOperands.empty())
    return op->emitError("shard-partition: a split reduction would add "
                         "operand ")
           << loops->rule.addedOperands.front() << " once per device";
  Location loc = op->getLoc();
  if (!splits->statistics.empty()) {
    if (!form || !splits->reduced.empty())
      return op->emitError("shard-partition: a split statistics factor is "
                           "not supported for this op");
    FailureOr<Value> value =
        form(op, partitionedOperands, grid, splits->statistics, builder);
    if (failed(value))
      return failure();
    if (value->getType() != shard::shardType(op->getResult(0).getType(), grid,
                                             resultShardings.front()))
      return op->emitError("shard-partition: the operands and the result of "
                           "a split statistics factor must be split alike");
    partitionMap.map(op->getResult(0), *value);
    partitionMap.map(op, value->getDefiningOp());
    return success();
  }
  FailureOr<Operation *> local = cloneLocally(
      op, grid, operandShardings, resultShardings, partitionMap, builder);
  if (failed(local))
    return failure();
  if (splits->reduced.empty())
    return success();
  Operation *last = *local;
  for (auto [serial, result] :
       llvm::zip_equal(op->getResults(), (*local)->getResults())) {
    Value value = complete(builder, loc, result, grid, *splits);
    partitionMap.map(serial, value);
    last = value.getDefiningOp();
  }
  partitionMap.map(op, last);
  return success();
}

/// The distributed form of `Op` split on a statistics factor.
template <typename Op> DistributedForm distributedFormOf() {
  if constexpr (std::is_same_v<Op, SoftmaxOp> ||
                std::is_same_v<Op, LogSoftmaxOp>)
    return distributedSoftmax;
  if constexpr (std::is_same_v<Op, LayerNormOp> ||
                std::is_same_v<Op, RMSNormOp>)
    return distributedNorm;
  return nullptr;
}

/// The model of every ober op with a sharding rule.
template <typename Op>
struct RuleSharding
    : public ShardingInterface::ExternalModel<RuleSharding<Op>, Op> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    std::optional<Loops> loops = loopsOf(op);
    return loops ? loops->iterators : SmallVector<utils::IteratorType>();
  }

  SmallVector<shard::ReductionKind>
  getReductionLoopIteratorKinds(Operation *op) const {
    std::optional<Loops> loops = loopsOf(op);
    return loops ? loops->reductionKinds : SmallVector<shard::ReductionKind>();
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    std::optional<Loops> loops = loopsOf(op);
    return loops ? loops->maps : SmallVector<AffineMap>();
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<shard::Sharding> operandShardings,
                          ArrayRef<shard::Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    return partitionByRule(op, partitionedOperands, operandShardings,
                           resultShardings, partitionMap, symbolTable, builder,
                           distributedFormOf<Op>());
  }
};

template <typename... Ops> void attach(MLIRContext *ctx) {
  (Ops::template attachInterface<RuleSharding<Ops>>(*ctx), ...);
}
} // namespace

void mlir::ober::registerShardingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, OberDialect *) {
    attach<
        // Elementwise, with broadcasting.
        NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp, SigmoidOp, ReluOp,
        SiluOp, ErfOp, ReciprocalOp, SinOp, CosOp, TanOp, AsinOp, AcosOp,
        AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, FloorOp, CeilOp,
        RoundOp, SignOp, NotOp, GeluOp, CastOp, AddOp, SubOp, MulOp, DivOp,
        PowOp, MaxOp, MinOp, RemOp, AndOp, OrOp, XorOp, CompareOp, SelectOp,
        DropoutOp, BroadcastToOp,
        // Contractions and reductions.
        MatmulOp, ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp,
        // Shapes.
        TransposeOp, ReshapeOp, SliceOp, SplitOp, ConcatOp, PadOp,
        // Normalization, losses and indexing.
        SoftmaxOp, LogSoftmaxOp, LayerNormOp, RMSNormOp, BatchNormInferenceOp,
        BatchNormTrainingOp, CrossEntropyOp, MSELossOp, OneHotOp, EmbeddingOp,
        GatherOp, ScatterAddOp, ScatterOp, AttentionOp,
        // Convolution and pooling, and their gradients.
        ConvOp, ConvTransposeOp, ConvWeightGradOp, MaxPoolOp, AvgPoolOp,
        MaxPoolGradOp, AvgPoolGradOp, AttentionGradOp>(ctx);
  });
}
