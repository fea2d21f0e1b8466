//===- Vocabulary.cpp - vocabulary-parallel embedding and cross-entropy ---===//
//
// Part of Ober-Train. Megatron's vocabulary parallelism: a table split by
// rows (the vocabulary) looks up only the ids in its block and leaves
// partial sums (masked rows); logits split by classes give the
// cross-entropy from three statistics of each sample completed over the
// devices (the largest logit, the sum of exponentials, the target's logit);
// the softmax of the backward pass reuses the first two. Each device learns
// its block's first row from its index along the axis: a local slice of
// 0, 1, ..., n - 1.
//
//===----------------------------------------------------------------------===//

#include "Spmd.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::partition;

namespace {
/// The one axis along which `layout` splits dimension `dim`, when every
/// other axis leaves that dimension whole and nothing is partial.
std::optional<unsigned> splitAxisOf(const Layout &layout, int64_t dim) {
  std::optional<unsigned> axis;
  for (auto [a, p] : llvm::enumerate(layout)) {
    if (p.isPartial() || p.isGrouped())
      return std::nullopt;
    if (p.isSplit() && p.dim == dim) {
      if (axis)
        return std::nullopt;
      axis = a;
    }
  }
  return axis;
}

struct Local {
  Spmd &spmd;
  Location loc;
  OpBuilder &b;
  Local(Spmd &spmd, Location loc) : spmd(spmd), loc(loc), b(spmd.getBuilder()) {}

  Value constant(Type element, double v) { return spmd.scalar(loc, element, v); }
  SmallVector<int64_t> last(Value v) {
    return {cast<RankedTensorType>(v.getType()).getRank() - 1};
  }
  /// `v` (a statistic over the split classes, partial along `axis`) made
  /// whole: an all-reduce.
  Value complete(Value v, const Layout &like, unsigned axis,
                 shard::ReductionKind kind) {
    Layout partial = like;
    partial[axis] = Placement::partial(kind);
    spmd.setLayout(v, partial);
    Layout whole = like;
    whole[axis] = Placement::rep();
    return spmd.reshard(v, whole, loc);
  }
  /// The first class (row) of this device's block along `axis`, as a rank-0
  /// tensor of `type`.
  Value blockStart(unsigned axis, int64_t rows, Type type) {
    int64_t n = spmd.axisSize(axis);
    auto starts = llvm::map_to_vector(llvm::seq<int64_t>(0, n), [&](int64_t i) {
      return APInt(type.getIntOrFloatBitWidth(), i * rows, /*isSigned=*/true);
    });
    return spmd.rowOfDevice(
        axis, DenseElementsAttr::get(RankedTensorType::get({n}, type), starts),
        loc);
  }
  /// Ids shifted into this device's block of `rows`, and whether each is in
  /// it.
  std::pair<Value, Value> local(Value ids, unsigned axis, int64_t rows) {
    Type it = cast<RankedTensorType>(ids.getType()).getElementType();
    Value shifted = SubOp::create(b, loc, ids, blockStart(axis, rows, it));
    Value inside = AndOp::create(
        b, loc,
        CompareOp::create(b, loc, CompareDirection::ge, shifted,
                          constant(it, 0)),
        CompareOp::create(b, loc, CompareDirection::lt, shifted,
                          constant(it, static_cast<double>(rows))));
    return {shifted, inside};
  }
};

/// A table split by rows along one axis, ids whole along it.
std::optional<LogicalResult> embedding(Spmd &spmd, EmbeddingOp op,
                                       IRMapping &map) {
  Value table = map.lookup(op.getTable()), ids = map.lookup(op.getIndices());
  Layout tl = spmd.layoutOf(table), il = spmd.layoutOf(ids);
  std::optional<unsigned> axis = splitAxisOf(tl, 0);
  if (!axis || !il[*axis].isRep())
    return std::nullopt;
  for (auto [a, p] : llvm::enumerate(tl))
    if (a != *axis && !p.isRep())
      return std::nullopt;
  for (Placement p : il)
    if (p.isPartial() || p.isGrouped())
      return std::nullopt;
  Local B(spmd, op.getLoc());
  int64_t rows = cast<RankedTensorType>(table.getType()).getDimSize(0);
  auto [shifted, inside] = B.local(ids, *axis, rows);
  Type it = cast<RankedTensorType>(ids.getType()).getElementType();
  Value safe = SelectOp::create(B.b, B.loc, inside, shifted, B.constant(it, 0));
  Value found = EmbeddingOp::create(B.b, B.loc, table, safe);
  auto type = cast<RankedTensorType>(found.getType());
  SmallVector<int64_t> column(type.getShape().drop_back());
  column.push_back(1);
  Value mask = ReshapeOp::create(
      B.b, B.loc, RankedTensorType::get(column, type.getElementType()),
      CastOp::create(B.b, B.loc,
                     cast<RankedTensorType>(inside.getType())
                         .clone(type.getElementType()),
                     inside));
  Value rowsOut = MulOp::create(B.b, B.loc, found, mask);
  // Split ids give split rows; this axis leaves addends.
  Layout out = spmd.replicated();
  for (auto [a, p] : llvm::enumerate(il))
    if (p.isSplit())
      out[a] = p;
  out[*axis] = Placement::partial();
  spmd.setLayout(rowsOut, out);
  map.map(op.getResult(), spmd.completeEager(rowsOut, op));
  return success();
}

/// The gradient of an embedding whose table is split by rows along one
/// axis (a scatter-add of the output's gradient at the same ids into zeros,
/// or into the table's gradient from elsewhere, split alike): each device
/// adds only the ids in its block, so the gradient is split like the table
/// (Megatron's) instead of formed whole and sliced. Along the other axes
/// the op is placed by its rule.
std::optional<LogicalResult> embeddingGradient(Spmd &spmd, ScatterAddOp op,
                                               IRMapping &map) {
  if (op.getAxis() != 0)
    return std::nullopt;
  // The one embedding of these ids from a table of this shape.
  EmbeddingOp forward;
  for (Operation *user : op.getIndices().getUsers())
    if (auto e = dyn_cast<EmbeddingOp>(user);
        e && e.getTable().getType() == op.getType()) {
      if (forward && forward.getTable() != e.getTable())
        return std::nullopt;
      forward = e;
    }
  Value table = forward ? map.lookupOrNull(forward.getTable()) : Value();
  if (!table)
    return std::nullopt;
  std::optional<unsigned> axis = splitAxisOf(spmd.layoutOf(table), 0);
  Value input = map.lookup(op.getInput()), ids = map.lookup(op.getIndices()),
        updates = map.lookup(op.getUpdates());
  if (!axis)
    return std::nullopt;
  Placement start = spmd.layoutOf(input)[*axis];
  bool zeros = start.isRep() && isZeros(op.getInput());
  if (!zeros && start != Placement::split(0))
    return std::nullopt;
  SmallVector<Layout> targets = {spmd.layoutOf(input), spmd.layoutOf(ids),
                                 spmd.layoutOf(updates)};
  Layout result = spmd.replicated();
  for (unsigned a = 0; a < spmd.numAxes(); ++a) {
    if (a == *axis || spmd.axisSize(a) == 1)
      continue;
    AxisDecision d =
        decide(op, {targets[0][a], targets[1][a], targets[2][a]},
               spmd.axisSize(a));
    if (d.operands[0].isSplit() || d.results[0].isSplit() ||
        (!d.divideResult.empty() && d.divideResult[0]))
      return std::nullopt;
    for (unsigned i = 0; i < 3; ++i)
      targets[i][a] = d.operands[i];
    result[a] = d.results[0];
  }
  targets[1][*axis] = targets[2][*axis] = Placement::rep();
  result[*axis] = Placement::split(0);
  Local B(spmd, op.getLoc());
  if (!zeros)
    input = spmd.reshard(input, targets[0], B.loc);
  ids = spmd.reshard(ids, targets[1], B.loc);
  updates = spmd.reshard(updates, targets[2], B.loc);
  auto type = cast<RankedTensorType>(updates.getType());
  RankedTensorType local =
      spmd.localType(op.getType(), result).clone(type.getElementType());
  if (zeros)
    input = ConstantOp::create(
        B.b, B.loc,
        DenseElementsAttr::get(local, B.b.getZeroAttr(type.getElementType())));
  auto [shifted, inside] = B.local(ids, *axis, local.getDimSize(0));
  Type it = cast<RankedTensorType>(ids.getType()).getElementType();
  Value safe = SelectOp::create(B.b, B.loc, inside, shifted, B.constant(it, 0));
  // Ids outside the block add zeros (at row 0; a select, so that an inf
  // of another block's row stays there).
  auto idsType = cast<RankedTensorType>(ids.getType());
  SmallVector<int64_t> column(idsType.getShape());
  column.append(local.getRank() - 1, 1);
  Value mask = ReshapeOp::create(
      B.b, B.loc, RankedTensorType::get(column, B.b.getI1Type()), inside);
  Value masked = SelectOp::create(B.b, B.loc, type, mask, updates,
                                  B.constant(type.getElementType(), 0.0));
  Value out = ScatterAddOp::create(B.b, B.loc, input, safe, masked, 0);
  spmd.setLayout(out, result);
  map.map(op.getResult(), out);
  return success();
}

/// Logits split by classes along one axis; integer targets whole along it
/// and split like the logits' samples along the others.
std::optional<LogicalResult> crossEntropy(Spmd &spmd, CrossEntropyOp op,
                                          IRMapping &map) {
  if (!runsOverSplitClasses(op))
    return std::nullopt;
  Value logits = map.lookup(op.getLogits()),
        targets = map.lookup(op.getTargets());
  Layout ll = spmd.layoutOf(logits), tl = spmd.layoutOf(targets);
  int64_t classes = cast<RankedTensorType>(logits.getType()).getRank() - 1;
  std::optional<unsigned> axis = splitAxisOf(ll, classes);
  if (!axis || !tl[*axis].isRep())
    return std::nullopt;
  for (auto [a, p] : llvm::enumerate(ll))
    if (a != *axis && p != tl[a])
      return std::nullopt;
  Local B(spmd, op.getLoc());
  OpBuilder &b = B.b;
  auto lt = cast<RankedTensorType>(logits.getType());
  Type ft = lt.getElementType();
  int64_t rows = lt.getDimSize(classes);
  auto last = b.getDenseI64ArrayAttr({classes});
  auto keep = b.getBoolAttr(true);
  Layout samples = ll; // the statistics: whole classes
  samples[*axis] = Placement::rep();
  auto [m, s] = spmd.softmaxStatistics(logits, *axis, op.getLoc());
  // The target's logit: a one-hot of this block (all zero where the
  // target is elsewhere) against the local logits.
  auto [shifted, inside] = B.local(targets, *axis, rows);
  Type it = cast<RankedTensorType>(targets.getType()).getElementType();
  Value safe = SelectOp::create(b, B.loc, inside, shifted,
                                B.constant(it, static_cast<double>(rows)));
  Value hot = OneHotOp::create(b, B.loc, lt, safe, rows, classes);
  Value picked = B.complete(
      ReduceSumOp::create(b, B.loc, MulOp::create(b, B.loc, logits, hot), last,
                          keep),
      ll, *axis, shard::ReductionKind::Sum);
  // loss = log(sum exp(l - m)) + m - (1 - ls) l_target - ls * mean_c l_c.
  double ls = op.getLabelSmoothing().convertToDouble();
  Value loss = SubOp::create(
      b, B.loc, AddOp::create(b, B.loc, LogOp::create(b, B.loc, s), m),
      MulOp::create(b, B.loc, picked, B.constant(ft, 1 - ls)));
  if (ls != 0) {
    Value all = B.complete(ReduceSumOp::create(b, B.loc, logits, last, keep),
                           ll, *axis, shard::ReductionKind::Sum);
    int64_t total = cast<RankedTensorType>(op.getLogits().getType())
                        .getDimSize(classes);
    loss = SubOp::create(b, B.loc, loss,
                         MulOp::create(b, B.loc, all,
                                       B.constant(ft, ls / total)));
  }
  // Per sample, then the reduction: samples split along other axes leave
  // partial sums there (a mean divided by the global count).
  auto perSample = cast<RankedTensorType>(loss.getType());
  loss = ReshapeOp::create(
      b, B.loc, perSample.clone(perSample.getShape().drop_back()), loss);
  Layout result = samples;
  if (op.getReduction() != LossReduction::none) {
    SmallVector<int64_t> all =
        llvm::to_vector(llvm::seq<int64_t>(0, classes));
    loss = ReduceSumOp::create(b, B.loc, loss, b.getDenseI64ArrayAttr(all),
                               b.getBoolAttr(false));
    if (op.getReduction() == LossReduction::mean) {
      double count = 1;
      for (int64_t d = 0; d < classes; ++d)
        count *= static_cast<double>(
            cast<RankedTensorType>(op.getLogits().getType()).getDimSize(d));
      loss = DivOp::create(b, B.loc, loss, B.constant(ft, count));
    }
    result = spmd.replicated();
    for (auto [a, p] : llvm::enumerate(samples))
      if (p.isSplit())
        result[a] = Placement::partial();
  }
  spmd.setLayout(loss, result);
  map.map(op.getResult(), spmd.completeEager(loss, op));
  return success();
}

/// A softmax over classes split along one axis: the statistics of the
/// forward cross-entropy when it saw the same logits, else computed.
std::optional<LogicalResult> softmax(Spmd &spmd, SoftmaxOp op, IRMapping &map) {
  Value x = map.lookup(op.getInput());
  Layout layout = spmd.layoutOf(x);
  if (!runsOverSplitClasses(op))
    return std::nullopt;
  int64_t along = cast<RankedTensorType>(x.getType()).getRank() - 1;
  std::optional<unsigned> axis = splitAxisOf(layout, along);
  if (!axis)
    return std::nullopt;
  OpBuilder &b = spmd.getBuilder();
  auto [m, s] = spmd.softmaxStatistics(x, *axis, op.getLoc());
  Value y = DivOp::create(
      b, op.getLoc(),
      ExpOp::create(b, op.getLoc(), SubOp::create(b, op.getLoc(), x, m)), s);
  spmd.setLayout(y, layout);
  map.map(op.getResult(), y);
  return success();
}
} // namespace

std::pair<Value, Value> Spmd::softmaxStatistics(Value x, unsigned axis,
                                                Location loc) {
  auto &cached = statistics[x];
  if (cached.first)
    return cached;
  Local B(*this, loc);
  Layout layout = layoutOf(x);
  auto last = builder.getDenseI64ArrayAttr(B.last(x));
  auto keep = builder.getBoolAttr(true);
  Value m = B.complete(ReduceMaxOp::create(builder, loc, x, last, keep), layout,
                       axis, shard::ReductionKind::Max);
  Value e = ExpOp::create(builder, loc, SubOp::create(builder, loc, x, m));
  Value s = B.complete(ReduceSumOp::create(builder, loc, e, last, keep), layout,
                       axis, shard::ReductionKind::Sum);
  return cached = {m, s};
}

std::optional<LogicalResult>
mlir::ober::partition::rebuildVocabularyParallel(Spmd &spmd, Operation *op,
                                                 IRMapping &map) {
  if (auto e = dyn_cast<EmbeddingOp>(op))
    return embedding(spmd, e, map);
  if (auto s = dyn_cast<ScatterAddOp>(op))
    return embeddingGradient(spmd, s, map);
  if (auto ce = dyn_cast<CrossEntropyOp>(op))
    return crossEntropy(spmd, ce, map);
  if (auto sm = dyn_cast<SoftmaxOp>(op))
    return softmax(spmd, sm, map);
  return std::nullopt;
}
