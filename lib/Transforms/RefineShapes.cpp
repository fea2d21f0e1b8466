//===- RefineShapes.cpp - pin dynamic shapes ------------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Transforms/RefineShapes.h"

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Dialect/Ober/IR/ShardingRules.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace mlir::ober;

/// The one dimension in which `before` and `after` differ, if exactly one
/// does.
static std::optional<int64_t> changedDim(RankedTensorType before,
                                         RankedTensorType after) {
  if (before.getRank() != after.getRank())
    return std::nullopt;
  std::optional<int64_t> changed;
  for (int64_t d = 0; d < before.getRank(); ++d)
    if (before.getDimSize(d) != after.getDimSize(d)) {
      if (changed)
        return std::nullopt;
      changed = d;
    }
  return changed;
}

namespace {
/// The factor of `tensor` that holds `at` (a block of `at.from` after
/// `at.groups` elements of its dimension), and the groups of it before the
/// batch; nullopt when no one parallel factor does (a concatenated, sliced
/// or reduced dimension does not keep the samples where they were).
std::optional<std::pair<unsigned, int64_t>>
factorHolding(const ShardingRule &rule, const TensorMapping &tensor,
              const BatchAt &at) {
  if (at.dim < 0 || at.dim >= static_cast<int64_t>(tensor.size()))
    return std::nullopt;
  int64_t before = 1;
  for (unsigned f : tensor[at.dim]) {
    int64_t size = rule.factors[f].size;
    if (at.groups % before == 0 && size % (at.groups / before * at.from) == 0)
      return rule.factors[f].kind == FactorKind::Parallel
                 ? std::optional(std::make_pair(f, at.groups / before))
                 : std::nullopt;
    before *= size;
    if (before > at.groups)
      break;
  }
  return std::nullopt;
}
} // namespace

DenseMap<Value, BatchAt> mlir::ober::followBatch(
    Block &body, ArrayRef<std::pair<BlockArgument, BatchAt>> arguments) {
  DenseMap<Value, BatchAt> at;
  for (auto [arg, where] : arguments)
    at[arg] = where;
  for (Operation &op : body) {
    auto held = llvm::find_if(op.getOperands(),
                              [&](Value v) { return at.count(v); });
    if (held == op.operand_end())
      continue;
    std::optional<ShardingRule> rule = getShardingRule(&op);
    if (!rule)
      continue;
    unsigned operand = held - op.operand_begin();
    BatchAt in = at.lookup(*held);
    auto f = factorHolding(*rule, rule->operands[operand], in);
    if (!f)
      continue;
    for (auto [r, tensor] : llvm::enumerate(rule->results)) {
      int64_t d = ShardingRule::dimOf(tensor, f->first);
      if (d < 0)
        continue;
      int64_t groups = f->second;
      for (unsigned g : tensor[d]) {
        if (g == f->first)
          break;
        groups *= rule->factors[g].size;
      }
      at[op.getResult(r)] = {d, groups, in.from, in.to};
    }
  }
  return at;
}

/// The batch of each value, followed from the arguments whose one
/// dimension changed (`argTypes` against their types now).
static DenseMap<Value, BatchAt> followChangedBatch(Block &body,
                                                   TypeRange argTypes) {
  SmallVector<std::pair<BlockArgument, BatchAt>> changed;
  for (auto [arg, type] : llvm::zip(body.getArguments(), argTypes)) {
    auto was = dyn_cast<RankedTensorType>(arg.getType());
    auto now = dyn_cast<RankedTensorType>(type);
    if (!was || !now || !was.hasStaticShape() || !now.hasStaticShape())
      continue;
    if (std::optional<int64_t> d = changedDim(was, now))
      changed.push_back(
          {arg, {*d, 1, was.getDimSize(*d), now.getDimSize(*d)}});
  }
  return followBatch(body, changed);
}

/// A static reshape result for an input `before` that became `after` in one
/// dimension `p` (a new batch): the result dimension that starts at the
/// same element offset as `p` (the last such, past size-1 dimensions)
/// scales alike, when it stays whole. Nullopt when none does.
static std::optional<RankedTensorType> rescaleReshape(RankedTensorType before,
                                                      RankedTensorType after,
                                                      RankedTensorType result) {
  std::optional<int64_t> p = changedDim(before, after);
  if (!p || !before.hasStaticShape() || !after.hasStaticShape() ||
      !result.hasStaticShape())
    return std::nullopt;
  int64_t outer = 1;
  for (int64_t d = 0; d < *p; ++d)
    outer *= before.getDimSize(d);
  int64_t from = before.getDimSize(*p), to = after.getDimSize(*p);
  SmallVector<int64_t> shape(result.getShape());
  std::optional<int64_t> q;
  for (int64_t d = 0, prefix = 1; d < result.getRank() && prefix <= outer;
       prefix *= shape[d], ++d)
    if (prefix == outer && from != 0 && shape[d] * to % from == 0)
      q = d;
  if (!q)
    return std::nullopt;
  shape[*q] = shape[*q] * to / from;
  return result.clone(shape);
}

/// Fills the dynamic sizes of `result` that its operand determines; a
/// static result whose operand changed size in one dimension scales with it
/// (see rescaleReshape).
static RankedTensorType resolveReshape(RankedTensorType before,
                                       RankedTensorType input,
                                       RankedTensorType result,
                                       std::optional<BatchAt> batch) {
  if (!input.hasStaticShape())
    return result;
  if (result.hasStaticShape() && before != input &&
      result.getNumElements() != input.getNumElements()) {
    // The result dimension that holds the batch scales with it.
    if (batch && batch->from != 0 &&
        result.getDimSize(batch->dim) * batch->to % batch->from == 0) {
      SmallVector<int64_t> shape(result.getShape());
      shape[batch->dim] = shape[batch->dim] * batch->to / batch->from;
      if (RankedTensorType scaled = result.clone(shape);
          scaled.getNumElements() == input.getNumElements())
        return scaled;
    }
    return rescaleReshape(before, input, result).value_or(result);
  }
  SmallVector<int64_t> shape(result.getShape());
  int64_t known = 1, dynamic = -1;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (ShapedType::isDynamic(d)) {
      if (dynamic >= 0)
        return result; // two unknowns: ambiguous
      dynamic = i;
    } else {
      known *= d;
    }
  }
  if (dynamic >= 0 && known != 0 && input.getNumElements() % known == 0)
    shape[dynamic] = input.getNumElements() / known;
  return result.clone(shape);
}

/// Fills the sizes of `result` that a non-broadcast operand dimension
/// determines: dynamic ones, and static ones the operand no longer matches
/// (it changed size).
static RankedTensorType resolveBroadcast(RankedTensorType input,
                                         RankedTensorType result) {
  SmallVector<int64_t> shape(result.getShape());
  int64_t offset = result.getRank() - input.getRank();
  for (int64_t i = 0; i < input.getRank() && offset >= 0; ++i)
    if (input.getDimSize(i) != 1 && !ShapedType::isDynamic(input.getDimSize(i)))
      shape[offset + i] = input.getDimSize(i);
  return result.clone(shape);
}

/// A slice over the whole of a dimension that changed size stays whole
/// (a part of it cannot be told apart from a part of the new size: left as
/// it is, for the verifier to judge).
static void resolveSlice(SliceOp slice, RankedTensorType before) {
  auto input = cast<RankedTensorType>(slice.getInput().getType());
  if (before.getRank() != input.getRank())
    return;
  SmallVector<int64_t> limits(slice.getLimits());
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (before.getDimSize(d) != input.getDimSize(d) &&
        slice.getStarts()[d] == 0 && slice.getStrides()[d] == 1 &&
        limits[d] == before.getDimSize(d))
      limits[d] = input.getDimSize(d);
  slice.setLimits(limits);
}

LogicalResult mlir::ober::refineFunctionShapes(func::FuncOp func,
                                               TypeRange argTypes) {
  if (func.isExternal())
    return func.emitError("cannot refine a function without a body");
  Block &body = func.getBody().front();
  if (argTypes.size() != body.getNumArguments())
    return func.emitError("expected ")
           << body.getNumArguments() << " argument types, got "
           << argTypes.size();
  // The types before, for the ops whose attributes follow their operands'.
  DenseMap<Value, Type> before;
  func.walk([&](Operation *op) {
    for (Value v : op->getResults())
      before[v] = v.getType();
  });
  for (BlockArgument arg : body.getArguments())
    before[arg] = arg.getType();
  auto typeBefore = [&](Value v) {
    return cast<RankedTensorType>(before.lookup(v));
  };
  DenseMap<Value, BatchAt> batch = followChangedBatch(body, argTypes);
  for (auto [arg, type] : llvm::zip(body.getArguments(), argTypes))
    arg.setType(type);
  for (Operation &op : body) {
    if (auto slice = dyn_cast<SliceOp>(op))
      resolveSlice(slice, typeBefore(slice.getInput()));
    // A dropout indexed within its own input (offsets only shift it) keeps
    // that whole shape.
    if (auto dropout = dyn_cast<DropoutOp>(op))
      if (std::optional<ArrayRef<int64_t>> whole = dropout.getGlobalShape();
          whole && *whole == typeBefore(dropout.getInput()).getShape())
        dropout.setGlobalShape(dropout.getInput().getType().getShape());
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      func.setFunctionType(FunctionType::get(
          func.getContext(), argTypes, ret.getOperandTypes()));
      continue;
    }
    SmallVector<Type> inferred;
    if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
      if (failed(infer.inferReturnTypes(
              op.getContext(), op.getLoc(), op.getOperands(),
              op.getAttrDictionary(), op.getPropertiesStorage(),
              op.getRegions(), inferred)))
        return failure();
    } else if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      auto at = batch.find(reshape.getResult());
      inferred.push_back(resolveReshape(
          typeBefore(reshape.getInput()), reshape.getInput().getType(),
          reshape.getType(),
          at == batch.end() ? std::nullopt : std::optional(at->second)));
    } else if (auto bcast = dyn_cast<BroadcastToOp>(op)) {
      inferred.push_back(
          resolveBroadcast(bcast.getInput().getType(), bcast.getType()));
    } else if (auto castOp = dyn_cast<CastOp>(op)) {
      inferred.push_back(castOp.getInput().getType().clone(
          castOp.getType().getElementType()));
    } else {
      continue;
    }
    for (auto [result, type] : llvm::zip(op.getResults(), inferred))
      result.setType(type);
  }
  return verify(func);
}
