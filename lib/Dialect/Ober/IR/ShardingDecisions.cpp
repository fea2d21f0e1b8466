//===- ShardingDecisions.cpp - how each ober op runs on split operands ----===//
//
// Part of Ober-Train. `decide` places one op along one grid axis from the
// sharding rule table (ShardingRules.h): the factor a split operand's
// dimension is made of says what the split does. A parallel factor stays
// split in every tensor that holds it; a reduction factor leaves partial
// results of its kind (a mean's divided by the parts); partial sums pass by
// the rule's linearity, so a gradient's data-parallel reduction happens
// once, where the step needs it. Per op family, decide picks which split
// operand places the op and keeps a few cases narrower than the table (each
// says so where it is). Grouped splits (a fused QKV) are the partitioner's
// own: slices, splits, concats and pads of whole groups keep them. Any
// other op, or a split the rule cannot keep, runs on whole operands: always
// correct, and the collectives that costs are visible in the program.
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/ShardingDecisions.h"

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Dialect/Ober/IR/ShardingRules.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ober;

int64_t mlir::ober::sliceGroups(BlockArgument arg, int64_t dim,
                                int64_t parts) {
  int64_t size = cast<RankedTensorType>(arg.getType()).getDimSize(dim);
  SmallVector<std::pair<Value, int64_t>> work = {{arg, dim}};
  SmallVector<std::pair<int64_t, int64_t>> slices;
  DenseSet<Value> seen;
  while (!work.empty()) {
    auto [v, d] = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
    for (Operation *u : v.getUsers()) {
      auto resultOf = [&]() { return u->getResult(0); };
      if (auto tr = dyn_cast<TransposeOp>(u)) {
        ArrayRef<int64_t> perm = tr.getPermutation();
        work.push_back({resultOf(), llvm::find(perm, d) - perm.begin()});
      } else if (isa<CastOp>(u)) {
        work.push_back({resultOf(), d});
      } else if (auto mm = dyn_cast<MatmulOp>(u)) {
        if (mm.getRhs() == v && d == rank - 1)
          work.push_back({resultOf(), cast<RankedTensorType>(
                                          resultOf().getType()).getRank() - 1});
      } else if (isa<AddOp>(u)) {
        auto type = cast<RankedTensorType>(resultOf().getType());
        int64_t rd = d + type.getRank() - rank;
        if (type.getDimSize(rd) == size)
          work.push_back({resultOf(), rd});
      } else if (auto sl = dyn_cast<SliceOp>(u)) {
        if (sl.getStrides()[d] != 1)
          return 1;
        slices.push_back({sl.getStarts()[d], sl.getLimits()[d]});
      } else if (auto sp = dyn_cast<SplitOp>(u)) {
        int64_t axis = sp.getAxis() < 0 ? sp.getAxis() + rank : sp.getAxis();
        if (axis != d)
          continue;
        int64_t start = 0;
        for (int64_t size : sp.getSizes()) {
          slices.push_back({start, start + size});
          start += size;
        }
      }
    }
  }
  if (slices.size() < 2)
    return 1;
  int64_t group = slices.front().second - slices.front().first;
  for (auto [start, limit] : slices)
    if (limit - start != group || start % group)
      return 1;
  if (group <= 0 || size % group || group % parts)
    return 1;
  return size / group;
}

bool mlir::ober::runsOverSplitClasses(Operation *op) {
  if (auto ce = dyn_cast<CrossEntropyOp>(op))
    return !ce.getIgnoreIndex() &&
           isa<IntegerType>(
               cast<RankedTensorType>(ce.getTargets().getType()).getElementType());
  if (auto s = dyn_cast<SoftmaxOp>(op)) {
    int64_t rank = s.getInput().getType().getRank(), axis = s.getAxis();
    return (axis < 0 ? axis + rank : axis) == rank - 1;
  }
  return false;
}

bool mlir::ober::isZeros(Value v) {
  if (auto b = v.getDefiningOp<BroadcastToOp>())
    v = b.getInput();
  auto c = v.getDefiningOp<ConstantOp>();
  auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : nullptr;
  if (!dense || !dense.isSplat())
    return false;
  if (isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().isZero();
  return dense.getSplatValue<APInt>().isZero();
}

namespace {
RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }
int64_t rankOf(Value v) { return typeOf(v).getRank(); }
/// `axis` of `v` counted from the front.
int64_t normalizedAxis(int64_t axis, Value v) {
  return axis < 0 ? axis + rankOf(v) : axis;
}

struct Rule {
  Operation *op;
  ArrayRef<Placement> in;
  int64_t parts;
  AxisDecision d;

  Rule(Operation *op, ArrayRef<Placement> in, int64_t parts)
      : op(op), in(in), parts(parts) {
    d.operands.assign(op->getNumOperands(), Placement::rep());
    d.results.assign(op->getNumResults(), Placement::rep());
    d.divideResult.assign(op->getNumResults(), false);
  }

  /// Whole operands and results.
  AxisDecision &whole() {
    d.operands.assign(op->getNumOperands(), Placement::rep());
    d.results.assign(op->getNumResults(), Placement::rep());
    d.divideResult.assign(op->getNumResults(), false);
    return d;
  }
  bool divisible(Value v, int64_t dim, int64_t groups = 1) const {
    if (dim < 0 || dim >= rankOf(v))
      return false;
    int64_t size = typeOf(v).getDimSize(dim);
    return !ShapedType::isDynamic(size) && size % (parts * groups) == 0 &&
           size >= parts * groups;
  }
  bool anyPartial() const {
    return llvm::any_of(in, [](Placement p) { return p.isPartial(); });
  }
  /// The result split on `dim` (in `groups`) when that divides evenly,
  /// else whole.
  AxisDecision &result(int64_t dim, unsigned r = 0, int64_t groups = 1) {
    if (!divisible(op->getResult(r), dim, groups))
      return whole();
    d.results[r] = Placement::split(dim, groups);
    return d;
  }
  /// A linear op of its partial operands: results partial.
  AxisDecision &partialThrough() {
    for (auto [i, p] : llvm::enumerate(in))
      d.operands[i] = p;
    for (Placement &r : d.results)
      r = Placement::partial();
    return d;
  }
};


/// Whether partial sums pass the op by its rule's linearity (its results
/// are then partial sums). Whole zeros added to the result, or summed (an
/// accumulation's start), are partial sums too (each device's zeros sum to
/// zeros).
bool passesPartials(const Rule &rule, const ShardingRule &table) {
  SmallVector<Holding> holdings;
  for (auto [i, p] : llvm::enumerate(rule.in)) {
    bool added = llvm::is_contained(table.addedOperands, i) ||
                 (table.linearity == Linearity::Additive &&
                  llvm::is_contained(table.linearOperands, i));
    bool zeros = p.isRep() && added && isZeros(rule.op->getOperand(i));
    holdings.push_back(p.isPartialSum() || zeros ? Holding::PartialSum
                       : p.isRep()               ? Holding::Whole
                                                 : Holding::Other);
  }
  return table.passesPartialSums(holdings);
}

/// The factor a split `p` of operand `operand` splits, when it is the only
/// factor of its dimension.
std::optional<unsigned> factorOf(const ShardingRule &table, unsigned operand,
                                 Placement p) {
  if (!p.isSplit())
    return std::nullopt;
  const DimMapping &dim = table.operands[operand][p.dim];
  if (dim.size() != 1)
    return std::nullopt;
  return dim.front();
}

/// The factor a split `p` of operand `operand` splits, when it is the only
/// factor of its dimension, parallel and held by some result.
std::optional<unsigned> splitFactor(const ShardingRule &table, unsigned operand,
                                    Placement p) {
  std::optional<unsigned> f = factorOf(table, operand, p);
  if (!f || table.factors[*f].kind != FactorKind::Parallel ||
      !table.inResults(*f))
    return std::nullopt;
  return f;
}

/// The reduction factor a split `p` of operand `operand` splits, when it is
/// the only factor of its dimension.
std::optional<unsigned> reducedFactor(const ShardingRule &table,
                                      unsigned operand, Placement p) {
  std::optional<unsigned> f = factorOf(table, operand, p);
  if (!f || table.factors[*f].kind != FactorKind::Reduction)
    return std::nullopt;
  return f;
}

/// A tensor split (in `groups`) on its dimension holding `factor`; whole
/// when it does not hold it.
Placement splitOn(const TensorMapping &tensor, unsigned factor,
                  int64_t groups) {
  int64_t d = ShardingRule::dimOf(tensor, factor);
  return d >= 0 ? Placement::split(d, groups) : Placement::rep();
}

/// Every operand and result that holds `factor` split on its dimension of
/// it (in `groups`), the others whole; whole when result 0's split does not
/// divide.
AxisDecision &alongFactor(Rule &rule, const ShardingRule &table,
                          unsigned factor, int64_t groups) {
  int64_t dim = ShardingRule::dimOf(table.results[0], factor);
  if (!rule.divisible(rule.op->getResult(0), dim, groups))
    return rule.whole();
  for (auto [i, t] : llvm::enumerate(table.operands))
    rule.d.operands[i] = splitOn(t, factor, groups);
  for (auto [r, t] : llvm::enumerate(table.results))
    rule.d.results[r] = splitOn(t, factor, groups);
  return rule.d;
}

/// Every operand that holds reduction factor `factor` split on its
/// dimension of it (in `groups`), the others whole; every result a partial
/// result of the factor's reduction (a local mean to be divided by the
/// parts). Whole unless the operands added once to the result are zeros.
AxisDecision &reducedAlong(Rule &rule, const ShardingRule &table,
                           unsigned factor, int64_t groups) {
  const ShardingFactor &f = table.factors[factor];
  for (unsigned i : table.addedOperands)
    if (!rule.in[i].isRep() || !isZeros(rule.op->getOperand(i)))
      return rule.whole();
  for (auto [i, t] : llvm::enumerate(table.operands))
    rule.d.operands[i] = splitOn(t, factor, groups);
  for (unsigned r = 0; r < rule.op->getNumResults(); ++r) {
    rule.d.results[r] = Placement::partial(f.reduction);
    rule.d.divideResult[r] = f.mean;
  }
  return rule.d;
}

/// The first operand split along the axis, if any.
std::optional<unsigned> firstSplit(const Rule &rule) {
  const Placement *p =
      llvm::find_if(rule.in, [](Placement x) { return x.isSplit(); });
  if (p == rule.in.end())
    return std::nullopt;
  return static_cast<unsigned>(p - rule.in.begin());
}

/// The op placed by the factor of its first split operand: partial sums
/// pass where the rule is linear; a parallel factor stays split in every
/// tensor that holds it, a reduction factor leaves partial results; any
/// other split runs whole.
AxisDecision &bySplit(Rule &rule, const ShardingRule &table) {
  if (passesPartials(rule, table))
    return rule.partialThrough();
  std::optional<unsigned> i = firstSplit(rule);
  if (!i)
    return rule.whole();
  const Placement *first = &rule.in[*i];
  if (std::optional<unsigned> f = splitFactor(table, *i, *first))
    return alongFactor(rule, table, *f, first->groups);
  if (std::optional<unsigned> f = reducedFactor(table, *i, *first))
    return reducedAlong(rule, table, *f, first->groups);
  return rule.whole();
}

/// An op that takes no partial operands (they are completed first),
/// placed by its first split operand's factor.
AxisDecision &byWholeSplit(Rule &rule, const ShardingRule &table) {
  if (rule.anyPartial())
    return rule.whole();
  return bySplit(rule, table);
}

/// Dropout: each element draws by its index in the whole tensor, so a
/// block drops what the serial op drops there once the partitioner gives
/// the local op its block's offsets, which the table's generic rule (a
/// dropping mask's positions need replication) cannot assume (added to the
/// op's own offsets: a micro-batch's first sample). A grouped split holds a
/// block of each group, not one block.
AxisDecision &dropout(Rule &rule, const ShardingRule &table, DropoutOp op) {
  if (op.getRatio().isZero())
    return byWholeSplit(rule, table);
  Placement p = rule.in[0];
  if (rule.anyPartial() || !rule.in[1].isRep() || !p.isSplit() ||
      p.isGrouped() || (op.getOffsets() && !rule.in[2].isRep()))
    return rule.whole();
  if (std::optional<unsigned> f = factorOf(table, 0, p)) {
    AxisDecision &d = alongFactor(rule, table, *f, /*groups=*/1);
    // The offsets are positions, not data along the factor.
    if (op.getOffsets())
      d.operands[2] = Placement::rep();
    return d;
  }
  return rule.whole();
}

/// Lookups (embedding, gather): one operand split on a parallel factor (the
/// indices' dimensions, a table's width), the other whole. A table split by
/// rows (an indexed reduction) is the vocabulary-parallel rebuild's.
AxisDecision &lookup(Rule &rule, const ShardingRule &table) {
  if (rule.anyPartial() ||
      llvm::count_if(rule.in, [](Placement p) { return p.isSplit(); }) != 1)
    return rule.whole();
  for (auto [i, p] : llvm::enumerate(rule.in))
    if (std::optional<unsigned> f = splitFactor(table, i, p))
      return alongFactor(rule, table, *f, p.groups);
  return rule.whole();
}

/// Embedding and gather gradients: indices and updates split alike on one
/// of the indices' (reduction) factors add into zeros, leaving partial
/// sums; partial updates added into zeros pass. The partitioner does not
/// split indices or updates that are whole here.
AxisDecision &scatterAdd(Rule &rule, const ShardingRule &table) {
  if (passesPartials(rule, table))
    return rule.partialThrough();
  std::optional<unsigned> first = firstSplit(rule);
  if (!first)
    return rule.whole();
  std::optional<unsigned> k = reducedFactor(table, *first, rule.in[*first]);
  if (!k)
    return rule.whole();
  for (auto [i, t] : llvm::enumerate(table.operands))
    if (ShardingRule::dimOf(t, *k) >= 0 &&
        rule.in[i] != splitOn(t, *k, rule.in[*first].groups))
      return rule.whole();
  return reducedAlong(rule, table, *k, rule.in[*first].groups);
}

/// The parallel factor a split `p` of operand `operand` splits, when
/// operand `other` does not hold it.
std::optional<unsigned> ownFactor(const ShardingRule &table, unsigned operand,
                                  Placement p, unsigned other) {
  std::optional<unsigned> f = splitFactor(table, operand, p);
  if (!f || ShardingRule::dimOf(table.operands[other], *f) >= 0)
    return std::nullopt;
  return f;
}

/// Convolutions (input, weight, bias): the input split on a factor the
/// weight lacks (samples) with the weight whole, or, where `weightSplits`,
/// the weight split on one the input lacks (output channels) with the
/// input whole.
AxisDecision &convolution(Rule &rule, const ShardingRule &table,
                          bool weightSplits) {
  Placement px = rule.in[0], pw = rule.in[1];
  if (rule.anyPartial())
    return rule.whole();
  if (std::optional<unsigned> f = ownFactor(table, 0, px, 1);
      f && !pw.isSplit())
    return alongFactor(rule, table, *f, px.groups);
  if (std::optional<unsigned> f = ownFactor(table, 1, pw, 0);
      f && weightSplits && px.isRep())
    return alongFactor(rule, table, *f, pw.groups);
  return rule.whole();
}

/// A convolution's weight gradient (input, output gradient): either split
/// on the samples, a reduction, leaves partial sums; the output gradient
/// split on a factor the input lacks (output channels), the input whole,
/// stays split.
AxisDecision &convWeightGrad(Rule &rule, const ShardingRule &table) {
  if (rule.anyPartial())
    return rule.whole();
  for (auto [i, p] : llvm::enumerate(rule.in))
    if (std::optional<unsigned> k = reducedFactor(table, i, p))
      return reducedAlong(rule, table, *k, p.groups);
  if (std::optional<unsigned> f = ownFactor(table, 1, rule.in[1], 0);
      f && rule.in[0].isRep())
    return alongFactor(rule, table, *f, rule.in[1].groups);
  return rule.whole();
}

/// Batched matmul with NumPy-broadcast batch dimensions (or a 2-D weight):
/// batch, row and column factors stay split; a split contraction leaves
/// partial sums.
AxisDecision &matmul(Rule &rule, const ShardingRule &table) {
  if (rule.anyPartial())
    return passesPartials(rule, table) ? rule.partialThrough() : rule.whole();
  Placement pa = rule.in[0], pb = rule.in[1];
  std::optional<unsigned> aK = reducedFactor(table, 0, pa),
                          bK = reducedFactor(table, 1, pb);
  // One operand split on the contraction, the other elsewhere: gather the
  // first rather than the second and a partial result (a weight gradient
  // from tokens split by sequence parallelism gathers the tokens again).
  if (aK && pb.isSplit() && !bK) {
    pa = Placement::rep();
    aK.reset();
  } else if (bK && pa.isSplit() && !aK) {
    pb = Placement::rep();
    bK.reset();
  }
  if (aK)
    return reducedAlong(rule, table, *aK, pa.groups);
  if (bK)
    return reducedAlong(rule, table, *bK, pb.groups);
  // The weight's split wins over the activation's (sequence parallelism:
  // the tokens are gathered for a column-parallel matmul).
  if (std::optional<unsigned> f = splitFactor(table, 1, pb))
    return alongFactor(rule, table, *f, pb.groups);
  if (std::optional<unsigned> f = splitFactor(table, 0, pa))
    return alongFactor(rule, table, *f, pa.groups);
  return rule.whole();
}

/// The factors before `factor` in its dimension of `tensor`, multiplied:
/// the groups a split of `factor` makes of that dimension (1: a plain
/// block split); -1 when the tensor lacks it.
int64_t groupsBefore(const ShardingRule &table, const TensorMapping &tensor,
                     unsigned factor) {
  int64_t d = ShardingRule::dimOf(tensor, factor);
  if (d < 0)
    return -1;
  int64_t groups = 1;
  for (unsigned f : tensor[d]) {
    if (f == factor)
      break;
    groups *= table.factors[f].size;
  }
  return groups;
}

/// Reshape: a split of an input dimension in `groups` splits the factor
/// that the factors before it make `groups` of (the major one for a plain
/// split), when the parts divide it. The factor stays split in the result
/// dimension that holds it, grouped by the factors before it there: a
/// batch that a reshape makes the minor part of [tokens x batch] is held
/// as each device's block of every token's samples.
AxisDecision &reshape(Rule &rule, const ShardingRule &table) {
  if (passesPartials(rule, table))
    return rule.partialThrough();
  Placement p = rule.in[0];
  if (!p.isSplit())
    return rule.whole();
  std::optional<unsigned> split;
  for (unsigned f : table.operands[0][p.dim])
    if (groupsBefore(table, table.operands[0], f) == p.groups) {
      split = f;
      break;
    }
  if (!split || table.factors[*split].kind != FactorKind::Parallel ||
      table.factors[*split].size % rule.parts)
    return rule.whole();
  int64_t groups = groupsBefore(table, table.results[0], *split);
  if (groups < 0)
    return rule.whole();
  rule.d.operands[0] = p;
  return rule.result(ShardingRule::dimOf(table.results[0], *split), 0, groups);
}

//===----------------------------------------------------------------------===//
// Whole groups of a split dimension
//
// A slice, split, concat or pad of a dimension is a permutation factor in
// the table: a split of it needs elements of other blocks. A split made of
// groups (Placement::groups, a fused QKV's columns) is the partitioner's
// own, which the table does not know: pieces that are whole groups of it
// stay split, each device holding its block of every group. These rules
// keep that case.
/// A slice taking whole groups of its split dimension: fewer groups.
AxisDecision &slicedGroups(Rule &rule, SliceOp op) {
  Placement p = rule.in[0];
  if (!p.isSplit())
    return rule.whole();
  int64_t dim = p.dim, size = typeOf(op.getInput()).getDimSize(dim);
  int64_t group = size / p.groups, start = op.getStarts()[dim],
          limit = op.getLimits()[dim];
  if (op.getStrides()[dim] != 1 || start % group || limit % group)
    return rule.whole();
  rule.d.operands[0] = p;
  return rule.result(dim, 0, (limit - start) / group);
}

/// Pieces of the split dimension that are whole groups of it: each piece
/// split in its groups.
AxisDecision &splitGroups(Rule &rule, SplitOp op) {
  Placement p = rule.in[0];
  if (!p.isSplit() || p.dim != normalizedAxis(op.getAxis(), op.getInput()))
    return rule.whole();
  int64_t group = typeOf(op.getInput()).getDimSize(p.dim) / p.groups;
  for (int64_t size : op.getSizes())
    if (size % group)
      return rule.whole();
  rule.d.operands[0] = p;
  for (auto [k, size] : llvm::enumerate(op.getSizes()))
    rule.d.results[k] = Placement::split(p.dim, size / group);
  return rule.d;
}

/// Pieces split along the axis into groups of one size (the gradients of a
/// fused QKV's parts): the result holds every piece's groups, a grouped
/// split (the inverse of splitGroups).
AxisDecision &concatGroups(Rule &rule, ConcatOp op) {
  int64_t axis = normalizedAxis(op.getAxis(), op.getResult());
  Placement p = rule.in[0];
  if (!p.isSplit() || p.dim != axis)
    return rule.whole();
  int64_t group = typeOf(op->getOperand(0)).getDimSize(axis) / p.groups,
          groups = 0;
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    Placement q = rule.in[i];
    if (!q.isSplit() || q.dim != axis ||
        typeOf(v).getDimSize(axis) != group * q.groups)
      return rule.whole();
    rule.d.operands[i] = q;
    groups += q.groups;
  }
  rule.d.results[0] = Placement::split(axis, groups);
  return rule.d;
}

/// Padding by whole groups of the split dimension: more groups.
AxisDecision &paddedGroups(Rule &rule, PadOp op) {
  Placement x = rule.in[0];
  int64_t group = typeOf(op.getInput()).getDimSize(x.dim) / x.groups;
  int64_t low = op.getLow()[x.dim], high = op.getHigh()[x.dim];
  if (low < 0 || high < 0 || low % group || high % group)
    return rule.whole();
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    rule.d.operands[i] = i == 0 ? x : Placement::rep();
  return rule.result(x.dim, 0,
                     typeOf(op.getResult()).getDimSize(x.dim) / group);
}

/// Slices and splits: a split of an untouched dimension (a parallel factor)
/// stays split in every piece; partial sums pass.
AxisDecision &sliced(Rule &rule, const ShardingRule &table) {
  if (passesPartials(rule, table))
    return rule.partialThrough();
  if (std::optional<unsigned> f = splitFactor(table, 0, rule.in[0]))
    return alongFactor(rule, table, *f, rule.in[0].groups);
  if (auto slice = dyn_cast<SliceOp>(rule.op))
    return slicedGroups(rule, slice);
  return splitGroups(rule, cast<SplitOp>(rule.op));
}

/// Concat: the first piece's split of an untouched dimension splits every
/// piece and the result; partial pieces are completed first.
AxisDecision &concatenated(Rule &rule, const ShardingRule &table) {
  if (rule.anyPartial() || !rule.in[0].isSplit())
    return rule.whole();
  if (std::optional<unsigned> f = splitFactor(table, 0, rule.in[0]))
    return alongFactor(rule, table, *f, rule.in[0].groups);
  return concatGroups(rule, cast<ConcatOp>(rule.op));
}

/// Constant padding: a split of an unpadded dimension stays split. The
/// table has unpadded dimensions parallel under every mode and passes
/// partial sums through padding with zeros; the partitioner runs the other
/// modes and partial operands whole.
AxisDecision &padded(Rule &rule, const ShardingRule &table) {
  auto pad = cast<PadOp>(rule.op);
  if (rule.anyPartial() || !rule.in[0].isSplit() ||
      pad.getMode() != PadMode::constant)
    return rule.whole();
  if (std::optional<unsigned> f = splitFactor(table, 0, rule.in[0]))
    return alongFactor(rule, table, *f, rule.in[0].groups);
  return paddedGroups(rule, pad);
}

/// Whether grouped splits pass `op`: the ops that keep dimensions apart.
bool keepsGroupsApart(Operation *op) {
  return isa<NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp, SigmoidOp,
             ReluOp, SiluOp, ErfOp, ReciprocalOp, GeluOp, CastOp, AddOp, SubOp,
             MulOp, DivOp, PowOp, MaxOp, MinOp, CompareOp, SelectOp, DropoutOp,
             MatmulOp, TransposeOp, BroadcastToOp, ReduceSumOp, ReduceMeanOp,
             ReduceMaxOp, ReduceMinOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp,
             RMSNormOp, SliceOp, PadOp, SplitOp, ReshapeOp>(op);
}
} // namespace

AxisDecision mlir::ober::decide(Operation *op,
                                           ArrayRef<Placement> in,
                                           int64_t parts) {
  Rule rule(op, in, parts);
  if (op->getNumOperands() == 0)
    return rule.d;
  // Whole operands give whole results.
  if (llvm::all_of(in, [](Placement p) { return p.isRep(); }))
    return rule.d;
  if (llvm::any_of(in, [](Placement p) { return p.isGrouped(); }) &&
      !keepsGroupsApart(op))
    return rule.whole();
  // Ops without a rule (dynamic shapes, a matmul of a vector) run whole.
  std::optional<ShardingRule> table = getShardingRule(op);
  if (!table)
    return rule.whole();
  return TypeSwitch<Operation *, AxisDecision>(op)
      .Case<NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp, SigmoidOp,
            ReluOp, SiluOp, ErfOp, ReciprocalOp, SinOp, CosOp, TanOp, AsinOp,
            AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, FloorOp,
            CeilOp, RoundOp, SignOp, NotOp, GeluOp, CastOp, AddOp, SubOp, MulOp,
            DivOp, PowOp, MaxOp, MinOp, RemOp, AndOp, OrOp, XorOp, CompareOp,
            SelectOp, ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp,
            TransposeOp, BroadcastToOp>(
          [&](Operation *) { return bySplit(rule, *table); })
      .Case([&](MatmulOp) { return matmul(rule, *table); })
      .Case([&](ReshapeOp) { return reshape(rule, *table); })
      .Case([&](DropoutOp d) { return dropout(rule, *table, d); })
      // A split statistics factor (a softmax axis, normalized dimensions)
      // runs whole here; a softmax over split classes is the
      // vocabulary-parallel rebuild's.
      .Case<SoftmaxOp, LogSoftmaxOp, LayerNormOp, RMSNormOp>(
          [&](Operation *) { return byWholeSplit(rule, *table); })
      .Case([&](CrossEntropyOp c) {
        // With ignored targets the mean's denominator counts the kept
        // targets of every sample; the table refuses only that mean, the
        // partitioner runs every such loss whole.
        if (c.getIgnoreIndex())
          return rule.whole();
        return byWholeSplit(rule, *table);
      })
      .Case([&](MSELossOp) { return byWholeSplit(rule, *table); })
      .Case([&](OneHotOp) { return bySplit(rule, *table); })
      .Case([&](EmbeddingOp) { return lookup(rule, *table); })
      .Case([&](GatherOp g) {
        // A split of the gathered axis runs whole; the input's other
        // dimensions are parallel (a micro-batch taken from the step's
        // batch keeps its split samples).
        if (in[0].isSplit() &&
            in[0].dim == normalizedAxis(g.getAxis(), g.getInput()))
          return rule.whole();
        return lookup(rule, *table);
      })
      .Case([&](ScatterAddOp) { return scatterAdd(rule, *table); })
      .Case([&](PadOp) { return padded(rule, *table); })
      .Case([&](ConvOp) {
        return convolution(rule, *table, /*weightSplits=*/true);
      })
      // The table has a transposed convolution's output channels parallel
      // in its weight; the partitioner runs that split whole.
      .Case([&](ConvTransposeOp) {
        return convolution(rule, *table, /*weightSplits=*/false);
      })
      .Case([&](ConvWeightGradOp) { return convWeightGrad(rule, *table); })
      .Case<MaxPoolOp, AvgPoolOp, MaxPoolGradOp, AvgPoolGradOp>(
          [&](Operation *) { return byWholeSplit(rule, *table); })
      // Attention (kept whole by the train step): batch and heads split.
      .Case<AttentionOp, AttentionGradOp>(
          [&](Operation *) { return byWholeSplit(rule, *table); })
      .Case([&](BatchNormInferenceOp) {
        // The table has channels and positions parallel too; the
        // partitioner keeps only split samples.
        if (!in[0].isSplit() || in[0].dim != 0)
          return rule.whole();
        return byWholeSplit(rule, *table);
      })
      .Case<SliceOp, SplitOp>([&](Operation *) { return sliced(rule, *table); })
      .Case([&](ConcatOp) { return concatenated(rule, *table); })
      .Default([&](Operation *) { return rule.whole(); });
}
