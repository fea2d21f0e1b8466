//===- Spmd.cpp - per-device values and the collectives between them ------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "Spmd.h"

#include "ober/Dialect/Ober/IR/OberBuilders.h"
#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Dialect/Ober/IR/ShardingRules.h"
#include "ober/Training/GradientFunction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::partition;

Layout Spmd::layoutOf(Value v) const {
  auto it = layouts.find(v);
  return it == layouts.end() ? replicated() : it->second;
}

RankedTensorType Spmd::localType(RankedTensorType global,
                                 const Layout &layout) const {
  SmallVector<int64_t> shape(global.getShape());
  for (auto [axis, p] : llvm::enumerate(layout))
    if (p.isSplit())
      shape[p.dim] /= axisSize(axis);
  return global.clone(shape);
}

RankedTensorType Spmd::globalTypeOf(Value v) const {
  auto local = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(local.getShape());
  for (auto [axis, p] : llvm::enumerate(layoutOf(v)))
    if (p.isSplit())
      shape[p.dim] *= axisSize(axis);
  return local.clone(shape);
}

Value Spmd::scalar(Location loc, Type elementType, double value) {
  return createScalarConstant(builder, loc, elementType, value);
}

Value Spmd::rowOfDevice(unsigned axis, DenseElementsAttr table, Location loc) {
  auto type = cast<RankedTensorType>(table.getType());
  Value all = ConstantOp::create(builder, loc, table);
  setLayout(all, replicated());
  Layout mine = replicated();
  mine[axis] = Placement::split(0);
  Value row = reshard(all, mine, loc);
  return ReshapeOp::create(builder, loc,
                           RankedTensorType::get(type.getShape().drop_front(),
                                                 type.getElementType()),
                           row);
}

/// A dropout of a split input draws each element by its index in the whole
/// tensor: the local op takes the whole shape and its block's first element
/// along every dimension (each splitting axis adds the device's index along
/// it times the block size, to the serial op's own offsets).
void Spmd::localizeDropout(DropoutOp local, DropoutOp serial,
                           const Layout &layout) {
  if (llvm::none_of(layout, [](Placement p) { return p.isSplit(); }))
    return;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(local);
  Location loc = serial.getLoc();
  RankedTensorType block = local.getInput().getType();
  int64_t rank = block.getRank();
  Value offsets;
  for (auto [axis, p] : llvm::enumerate(layout)) {
    if (!p.isSplit())
      continue;
    int64_t n = axisSize(axis);
    SmallVector<APInt> rows(n * rank, APInt(64, 0));
    for (int64_t i = 0; i < n; ++i)
      rows[i * rank + p.dim] = APInt(64, i * block.getDimSize(p.dim));
    Value mine = rowOfDevice(
        axis,
        DenseElementsAttr::get(
            RankedTensorType::get({n, rank}, builder.getI64Type()), rows),
        loc);
    offsets =
        offsets ? AddOp::create(builder, loc, offsets, mine).getResult() : mine;
  }
  if (Value given = local.getOffsets())
    offsets = AddOp::create(builder, loc, given, offsets);
  local.getOffsetsMutable().assign(offsets);
  local.setGlobalShape(serial.getWholeShape());
}

/// One collective along `axis` taking `v` from `from` to `to`.
Value Spmd::create(Location loc, Value v, unsigned axis, Placement from,
                   Placement to) {
  Layout after = layoutOf(v);
  RankedTensorType global = globalTypeOf(v);
  after[axis] = to;
  RankedTensorType type = localType(global, after);
  auto gridRef = FlatSymbolRefAttr::get(grid.getSymNameAttr());
  auto axes = builder.getDenseI16ArrayAttr({static_cast<int16_t>(axis)});
  Value out;
  if (localAxis && axis == *localAxis && from.isPartial() && to.isRep()) {
    // Local SGD: this device's share stands for each device's (a new
    // value, so that `v` keeps its partial layout).
    double factor = from.reduction == shard::ReductionKind::Sum
                        ? static_cast<double>(axisSize(axis))
                        : 1.0;
    out = MulOp::create(builder, loc, v,
                        scalar(loc, getElementTypeOrSelf(v.getType()), factor));
  } else if (from.isPartial() && to.isRep()) {
    out = shard::AllReduceOp::create(
        builder, loc, type, gridRef, axes, v,
        shard::ReductionKindAttr::get(builder.getContext(), from.reduction));
  } else if (from.isPartial() && to.isSplit()) {
    out = shard::ReduceScatterOp::create(
        builder, loc, type, gridRef, axes, v,
        shard::ReductionKindAttr::get(builder.getContext(), from.reduction),
        builder.getIndexAttr(to.dim));
  } else if (from.isSplit() && to.isRep()) {
    out = shard::AllGatherOp::create(builder, loc, type, gridRef, axes, v,
                                     builder.getIndexAttr(from.dim));
  } else if (from.isRep() && to.isSplit()) {
    out = shard::AllSliceOp::create(builder, loc, type, v, grid.getSymName(),
                                    {static_cast<shard::GridAxis>(axis)},
                                    to.dim);
  } else if (from.isSplit() && to.isSplit()) {
    // Each device sends the block of the new dimension each other device
    // keeps, and joins what it receives along the old one.
    out = shard::AllToAllOp::create(builder, loc, type, gridRef, axes, v,
                                    builder.getIndexAttr(to.dim),
                                    builder.getIndexAttr(from.dim));
  } else {
    llvm_unreachable("no single collective for this change");
  }
  setLayout(out, after);
  return out;
}

Value Spmd::reshard(Value v, unsigned axis, Placement target, Location loc,
                    bool again) {
  Placement from = layoutOf(v)[axis];
  if (from == target)
    return v;
  auto key = std::make_tuple(v.getAsOpaquePointer(), axis,
                             static_cast<int>(target.kind), target.dim,
                             static_cast<int>(target.reduction), target.groups);
  Value &slot = moved[key];
  if (!slot || again)
    slot = move(v, axis, from, target, loc);
  return slot;
}

void Spmd::forgetMovesIn(Region &region) {
  for (auto it = moved.begin(); it != moved.end();)
    if (it->second && region.isAncestor(it->second.getParentRegion()))
      it = moved.erase(it);
    else
      ++it;
}

void Spmd::forgetMovesOfArguments() {
  for (auto it = moved.begin(); it != moved.end();)
    if (isa<BlockArgument>(
            Value::getFromOpaquePointer(std::get<0>(it->first))))
      it = moved.erase(it);
    else
      ++it;
}

void Spmd::forgetValuesIn(Block *block) {
  auto in = [&](Value v) { return v && v.getParentBlock() == block; };
  for (auto it = moved.begin(); it != moved.end();)
    if (in(it->second) ||
        in(Value::getFromOpaquePointer(std::get<0>(it->first))))
      it = moved.erase(it);
    else
      ++it;
  auto forget = [&](Value v) {
    layouts.erase(v);
    statistics.erase(v);
  };
  for (BlockArgument arg : block->getArguments())
    forget(arg);
  for (Operation &op : *block)
    for (Value r : op.getResults())
      forget(r);
  SmallVector<Value> stale;
  for (auto &[x, pair] : statistics)
    if (in(pair.first) || in(pair.second))
      stale.push_back(x);
  for (Value x : stale)
    statistics.erase(x);
}

Value Spmd::move(Value v, unsigned axis, Placement from, Placement target,
                 Location loc) {
  assert(!target.isPartial() && "values become partial only through ops");
  // A partial max (or min, product) has no reduce-scatter: reduce, slice.
  if (from.isPartial() && target.isSplit() && !from.isPartialSum())
    return create(loc, create(loc, v, axis, from, Placement::rep()), axis,
                  Placement::rep(), target);
  // Another dimension: an all-to-all when neither split is grouped and the
  // local block divides along the new one; else gather, then take the
  // block.
  if (from.isSplit() && target.isSplit()) {
    auto local = cast<RankedTensorType>(v.getType());
    if (!from.isGrouped() && !target.isGrouped() &&
        local.getDimSize(target.dim) % axisSize(axis) == 0)
      return create(loc, v, axis, from, target);
    return move(move(v, axis, from, Placement::rep(), loc), axis,
                Placement::rep(), target, loc);
  }
  if (from.isGrouped() || target.isGrouped())
    return grouped(loc, v, axis, from, target);
  return create(loc, v, axis, from, target);
}

Value Spmd::grouped(Location loc, Value v, unsigned axis, Placement from,
                    Placement to) {
  Placement g = from.isGrouped() ? from : to;
  int64_t d = g.dim, groups = g.groups;
  Layout layout = layoutOf(v);
  auto local = cast<RankedTensorType>(v.getType());
  // The same data with dimension d as [groups, size / groups]; other
  // axes' splits of later dimensions move one dimension on.
  auto expand = [&](Placement p) {
    if (p.isSplit() && p.dim > d)
      return p.on(p.dim + 1);
    if (p.isSplit() && p.dim == d)
      return Placement::split(d + 1);
    return p;
  };
  SmallVector<int64_t> shape(local.getShape());
  shape[d] /= groups;
  shape.insert(shape.begin() + d, groups);
  Layout expanded;
  for (Placement p : layout)
    expanded.push_back(expand(p));
  Value view = ReshapeOp::create(builder, loc, local.clone(shape), v);
  setLayout(view, expanded);
  Value moved = reshard(view, axis, to.isGrouped() ? Placement::split(d + 1)
                                                   : to, loc);
  layout[axis] = to;
  Value back = ReshapeOp::create(
      builder, loc, localType(globalTypeOf(v), layout), moved);
  setLayout(back, layout);
  return back;
}

Value Spmd::reshard(Value v, const Layout &target, Location loc, bool again) {
  // Gather the splits that change first: a dimension another axis is about
  // to split must be whole before (blocks of two axes nest in axis order).
  // A split moving to another dimension that no other axis splits, now or
  // after, goes directly (an all-to-all), before the other axes move: its
  // old dimension may then take another axis's split.
  auto otherSplits = [&](unsigned axis, int64_t d, bool after) {
    for (unsigned other = 0; other < numAxes(); ++other) {
      Placement now = layoutOf(v)[other], then = target[other];
      if (other != axis && ((now.isSplit() && now.dim == d) ||
                            (after && then.isSplit() && then.dim == d)))
        return true;
    }
    return false;
  };
  auto direct = [&](unsigned axis) {
    Placement from = layoutOf(v)[axis], p = target[axis];
    return from.isSplit() && p.isSplit() && from != p && !from.isGrouped() &&
           !p.isGrouped() && !otherSplits(axis, from.dim, false) &&
           !otherSplits(axis, p.dim, true);
  };
  for (auto [axis, p] : llvm::enumerate(target)) {
    Placement from = layoutOf(v)[axis];
    if (from.isSplit() && from != p && !direct(axis))
      v = reshard(v, axis, Placement::rep(), loc, again);
  }
  for (unsigned axis = 0; axis < target.size(); ++axis)
    if (direct(axis))
      v = reshard(v, axis, target[axis], loc, again);
  // Local slices of dimensions no other axis splits come before the
  // collectives of the other axes, which then move less.
  for (unsigned axis = 0; axis < target.size(); ++axis)
    if (Placement p = target[axis]; layoutOf(v)[axis].isRep() &&
                                    p.isSplit() &&
                                    !otherSplits(axis, p.dim, true))
      v = reshard(v, axis, p, loc, again);
  for (auto [axis, p] : llvm::enumerate(target))
    v = reshard(v, axis, p, loc, again);
  return v;
}

/// Attributes that spell out positions along a split dimension: the rules
/// keep a slice or pad there only when it covers whole groups (or the whole
/// dimension), so the local offsets are the global ones over the parts.
void Spmd::localizeAttributes(Operation *local) {
  if (local->getNumOperands() == 0)
    return;
  Value input = local->getOperand(0);
  auto type = dyn_cast<RankedTensorType>(input.getType());
  if (!type)
    return;
  SmallVector<int64_t> parts(type.getRank(), 1);
  for (auto [axis, p] : llvm::enumerate(layoutOf(input)))
    if (p.isSplit())
      parts[p.dim] *= axisSize(axis);
  ober::localizeAttributes(local, parts);
}

RankedTensorType Spmd::computed(RankedTensorType type) const {
  if (computeType && type.getElementType().isF32())
    return type.clone(computeType);
  return type;
}

LogicalResult Spmd::rebuild(Operation *op, IRMapping &map) {
  if (std::optional<LogicalResult> done = rebuildBatchNorm(*this, op, map))
    return *done;
  if (std::optional<LogicalResult> done =
          rebuildVocabularyParallel(*this, op, map))
    return *done;
  // Constants in the compute type (no operands: whole everywhere).
  if (auto constant = dyn_cast<ConstantOp>(op); constant && computeType) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (dense && dense.getElementType().isF32()) {
      auto type = computed(cast<RankedTensorType>(dense.getType()));
      auto semantics = &cast<FloatType>(computeType).getFloatSemantics();
      DenseElementsAttr value = dense.mapValues(computeType, [&](const APFloat &f) {
        APFloat c = f;
        bool lost;
        c.convert(*semantics, APFloat::rmNearestTiesToEven, &lost);
        return c.bitcastToAPInt();
      });
      Value local = ConstantOp::create(builder, op->getLoc(), value);
      (void)type;
      setLayout(local, replicated());
      map.map(op->getResult(0), local);
      return success();
    }
  }
  unsigned numOperands = op->getNumOperands(), numResults = op->getNumResults();
  SmallVector<Value> given = llvm::map_to_vector(
      op->getOperands(), [&](Value v) { return map.lookup(v); });
  joinAsShare(op, given);
  SmallVector<Layout> operandTargets(numOperands, replicated()),
      resultLayouts(numResults, replicated());
  SmallVector<SmallVector<bool>> divide(numResults,
                                        SmallVector<bool>(numAxes(), false));
  for (unsigned axis = 0; axis < numAxes(); ++axis) {
    // One device along the axis: everything is whole there.
    if (axisSize(axis) == 1)
      continue;
    SmallVector<Placement> in;
    for (Value operand : given)
      in.push_back(layoutOf(operand)[axis]);
    if (sequence.contains(axis))
      gatherTokensFor(op, in);
    AxisDecision d = decide(op, in, axisSize(axis));
    for (unsigned i = 0; i < numOperands; ++i)
      operandTargets[i][axis] = d.operands[i];
    for (unsigned r = 0; r < numResults; ++r) {
      resultLayouts[r][axis] = d.results[r];
      divide[r][axis] = !d.divideResult.empty() && d.divideResult[r];
    }
  }
  // Two axes may not split one dimension: keep the first.
  auto dedupe = [&](Layout &layout) {
    for (unsigned a = 0; a < layout.size(); ++a)
      for (unsigned b = a + 1; b < layout.size(); ++b)
        if (layout[a].isSplit() && layout[b].isSplit() &&
            layout[a].dim == layout[b].dim)
          layout[b] = Placement::rep();
  };
  IRMapping operands;
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    dedupe(operandTargets[i]);
    operands.map(operand, reshard(given[i], operandTargets[i], op->getLoc()));
  }
  Operation *local = builder.clone(*op, operands);
  localizeAttributes(local);
  if (auto dropout = dyn_cast<DropoutOp>(local))
    localizeDropout(dropout, cast<DropoutOp>(op), resultLayouts[0]);
  for (unsigned r = 0; r < numResults; ++r) {
    auto global = dyn_cast<RankedTensorType>(op->getResult(r).getType());
    if (!global)
      return op->emitError("the partitioner handles ranked tensors only");
    local->getResult(r).setType(computed(localType(global, resultLayouts[r])));
  }
  if (auto infer = dyn_cast<InferTypeOpInterface>(local)) {
    SmallVector<Type> inferred;
    if (failed(infer.inferReturnTypes(
            local->getContext(), local->getLoc(), local->getOperands(),
            local->getAttrDictionary(), local->getPropertiesStorage(),
            local->getRegions(), inferred)) ||
        TypeRange(inferred) != local->getResultTypes())
      return op->emitError("partitioning '")
             << op->getName() << "' gave local types that the op does not "
             << "accept (an internal error of its partitioning rule)";
  }
  for (unsigned r = 0; r < numResults; ++r) {
    Value value = local->getResult(r);
    for (unsigned axis = 0; axis < numAxes(); ++axis)
      if (divide[r][axis]) {
        auto type = cast<RankedTensorType>(value.getType());
        value = MulOp::create(
            builder, op->getLoc(), type, value,
            scalar(op->getLoc(), type.getElementType(),
                   1.0 / static_cast<double>(axisSize(axis))));
      }
    setLayout(value, resultLayouts[r]);
    map.map(op->getResult(r), completeEager(value, op));
  }
  return success();
}

/// A scalar sum of a partial sum and a whole value along an axis whose
/// partial sums wait for their use (data parallelism): the whole value
/// joins as one device's share (the others add zeros, exactly), so the sum
/// stays partial and is completed once where it is needed. A running sum
/// over gradients (a clipping norm, an overflow probe) of ZeRO shards and
/// whole gradients would otherwise be completed term by term.
void Spmd::joinAsShare(Operation *op, SmallVectorImpl<Value> &local) {
  if (!isa<AddOp>(op) || local.size() != 2)
    return;
  auto type = cast<RankedTensorType>(local[0].getType());
  if (type.getRank() != 0 || !isa<FloatType>(type.getElementType()) ||
      local[1].getType() != type)
    return;
  for (unsigned axis = 0; axis < numAxes(); ++axis) {
    if (axisSize(axis) == 1 || eager.contains(axis))
      continue;
    Placement p0 = layoutOf(local[0])[axis], p1 = layoutOf(local[1])[axis];
    if (p0.isPartialSum() == p1.isPartialSum())
      continue;
    unsigned whole = p0.isPartialSum() ? 1 : 0;
    if (!layoutOf(local[whole])[axis].isRep())
      continue;
    Location loc = op->getLoc();
    int64_t n = axisSize(axis);
    // The first device keeps the value, the others zeros (a select, so
    // that an inf stays an inf).
    SmallVector<bool> first(n, false);
    first[0] = true;
    Value mine = rowOfDevice(
        axis,
        DenseElementsAttr::get(RankedTensorType::get({n}, builder.getI1Type()),
                               first),
        loc);
    Layout layout = layoutOf(local[whole]);
    Value share = SelectOp::create(builder, loc, type, mine, local[whole],
                                   scalar(loc, type.getElementType(), 0.0));
    layout[axis] = Placement::partial();
    setLayout(share, layout);
    local[whole] = share;
  }
}

Value Spmd::completeEager(Value value, Operation *op) {
  for (unsigned axis : eager) {
    Layout layout = layoutOf(value);
    RankedTensorType type = globalTypeOf(value);
    int64_t tokens = type.getRank() - 2;
    bool free = tokens >= 0 && llvm::none_of(layout, [&](Placement p) {
      return p.isSplit() && p.dim == tokens;
    });
    bool split = sequence.contains(axis) && free && splitsByTokens(op, type) &&
                 type.getDimSize(tokens) % axisSize(axis) == 0;
    // A whole table lookup enters the token-split region by a slice.
    if (layout[axis].isRep()) {
      if (split && isTableLookup(op) && isa<FloatType>(type.getElementType()))
        value = reshard(value, axis, Placement::split(tokens), op->getLoc());
      continue;
    }
    if (!layout[axis].isPartial())
      continue;
    Placement target = Placement::rep();
    if (split && makesTokenActivation(op) && layout[axis].isPartialSum())
      target = Placement::split(tokens);
    value = reshard(value, axis, target, op->getLoc());
  }
  return value;
}
