//===- GradientFunction.cpp - the shape of a gradient function ------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Training/GradientFunction.h"

#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Dialect/Ober/IR/ShardingRules.h"

using namespace mlir;
using namespace mlir::ober;

DenseSet<Operation *> mlir::ober::forwardOps(func::FuncOp func) {
  DenseSet<Operation *> forward;
  if (func.isExternal() || func.getNumResults() == 0)
    return forward;
  Operation *ret = func.getBody().front().getTerminator();
  SmallVector<Value> work = {ret->getOperand(0)};
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !forward.insert(def).second)
      continue;
    llvm::append_range(work, def->getOperands());
  }
  return forward;
}

DenseMap<Operation *, int>
mlir::ober::placeBackwardOps(func::FuncOp func,
                             const DenseSet<Operation *> &forward,
                             const DenseMap<Operation *, int> &forwardPlace) {
  Block &body = func.getBody().front();
  DenseMap<Operation *, int> place;
  DenseMap<Value, int> useAt;
  auto forUse = [&](Value v) {
    if (auto it = useAt.find(v); it != useAt.end())
      return it->second;
    int s = -1;
    for (Operation *u : v.getUsers())
      if (forward.contains(u))
        s = std::max(s, forwardPlace.lookup_or(u, -1));
    if (s < 0)
      if (Operation *def = v.getDefiningOp())
        s = forwardPlace.lookup_or(def, -1);
    return useAt[v] = s;
  };
  for (Operation &op : body.without_terminator()) {
    if (forward.contains(&op))
      continue;
    int s = -1;
    for (Value v : op.getOperands()) {
      Operation *def = v.getDefiningOp();
      int from = !def || forward.contains(def) ? forUse(v)
                                               : place.lookup_or(def, -1);
      if (from >= 0)
        s = s < 0 ? from : std::min(s, from);
    }
    place[&op] = s;
  }
  // An op that reads only backward values (a sum of gradients, a view of
  // one) and whose users all run in earlier places runs in the latest of
  // them when what it reads goes there anyway, or when it is a reshape or
  // transpose: the gradient of a value read twice then crosses once, and
  // as the activation that crossed forward. Users first (in reverse order), so
  // chains of such ops follow.
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    auto at = place.find(&op);
    if (at == place.end() || at->second < 0 ||
        llvm::any_of(op.getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return !def || forward.contains(def);
        }))
      continue;
    int s = at->second, t = -1;
    bool earlier = !op.use_empty();
    for (Operation *u : op.getUsers()) {
      int pu = place.lookup_or(u, -1);
      earlier &= pu >= 0 && pu < s;
      t = std::max(t, pu);
    }
    if (!earlier)
      continue;
    // (A reshape or transpose sends the same elements as what it reads.)
    bool view = op.getNumOperands() == 1 && isa<ReshapeOp, TransposeOp>(op);
    bool sentAnyway = view || llvm::all_of(op.getOperands(), [&](Value v) {
      int from = place.lookup_or(v.getDefiningOp(), -1);
      return from < 0 || from == t ||
             llvm::any_of(v.getUsers(), [&](Operation *u) {
               return u != &op && place.lookup_or(u, -1) == t;
             });
    });
    if (sentAnyway)
      at->second = t;
  }
  return place;
}

DenseMap<Value, int64_t> mlir::ober::batchDimensions(func::FuncOp func) {
  DenseMap<Value, int64_t> dims;
  DenseSet<Type> paramTypes;
  int64_t samples = 0;
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() == 0)
      continue;
    if (func.getArgAttr(arg.getArgNumber(), OberDialect::kParamAttrName)) {
      paramTypes.insert(type);
      SmallVector<int64_t> reversed(llvm::reverse(type.getShape()));
      paramTypes.insert(type.clone(reversed));
      continue;
    }
    dims[arg] = 0;
    samples = type.getDimSize(0);
  }
  // With one sample the rules have no batch factor (factors of size 1 are
  // left out): a value computed from the batch has its dimension unless it
  // is typed like a parameter (its gradient) or is a scalar.
  if (samples == 1) {
    for (Operation &op : func.getBody().front())
      for (Value r : op.getResults()) {
        auto type = dyn_cast<RankedTensorType>(r.getType());
        if (type && type.getRank() > 0 && !paramTypes.contains(type) &&
            llvm::any_of(op.getOperands(),
                         [&](Value v) { return dims.count(v); }))
          dims[r] = 0;
      }
    return dims;
  }
  for (Operation &op : func.getBody().front()) {
    SmallVector<std::pair<unsigned, int64_t>> batched;
    for (auto [i, v] : llvm::enumerate(op.getOperands()))
      if (auto it = dims.find(v); it != dims.end())
        batched.push_back({static_cast<unsigned>(i), it->second});
    if (batched.empty())
      continue;
    std::optional<ShardingRule> rule = getShardingRule(&op);
    for (auto [r, result] : llvm::enumerate(op.getResults())) {
      int64_t found = -1;
      for (auto [i, d] : batched) {
        if (!rule) {
          if (op.getOperand(i).getType() == result.getType())
            found = d;
        } else if (const DimMapping &m = rule->operands[i][d]; !m.empty()) {
          for (auto [e, factors] : llvm::enumerate(rule->results[r]))
            if (llvm::is_contained(factors, m.front())) {
              found = static_cast<int64_t>(e);
              break;
            }
        }
        if (found >= 0)
          break;
      }
      if (found >= 0)
        dims[result] = found;
    }
  }
  return dims;
}

Value mlir::ober::viewRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (def->getNumOperands() != 1 || !isa<ReshapeOp, TransposeOp, CastOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

BlockArgument mlir::ober::parameterRoot(Value v) {
  auto arg = dyn_cast<BlockArgument>(viewRoot(v));
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                  : func::FuncOp();
  return func && func.getArgAttr(arg.getArgNumber(), OberDialect::kParamAttrName)
             ? arg
             : BlockArgument();
}

StringRef mlir::ober::parameterName(BlockArgument arg) {
  auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return func
      .getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                    OberDialect::kParamAttrName)
      .getValue();
}

SmallVector<std::pair<BlockArgument, Value>>
mlir::ober::parameterGradients(func::FuncOp func) {
  SmallVector<BlockArgument> params;
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), OberDialect::kParamAttrName))
      params.push_back(arg);
  Operation *ret = func.getBody().front().getTerminator();
  SmallVector<std::pair<BlockArgument, Value>> out;
  if (ret->getNumOperands() < params.size())
    return out;
  ValueRange grads = ret->getOperands().take_back(params.size());
  for (auto [arg, g] : llvm::zip(params, grads))
    out.push_back({arg, g});
  return out;
}

bool mlir::ober::isTableLookup(Operation *op) {
  if (isa<EmbeddingOp>(op))
    return true;
  auto gather = dyn_cast<GatherOp>(op);
  return gather && gather.getAxis() == 0 && parameterRoot(gather.getInput());
}

bool mlir::ober::looksUpSharedRows(Operation *op) {
  if (!isTableLookup(op))
    return false;
  Operation *ids = op->getOperand(1).getDefiningOp();
  return ids && ids->hasTrait<OpTrait::ConstantLike>();
}

bool mlir::ober::isActivationMatmul(Operation *op) {
  auto matmul = dyn_cast<MatmulOp>(op);
  return matmul && parameterRoot(matmul.getRhs());
}

bool mlir::ober::makesTokenActivation(Operation *op) {
  return isActivationMatmul(op) || isTableLookup(op);
}

bool mlir::ober::splitsByTokens(Operation *op, RankedTensorType type) {
  return hasTokens(type.getRank(), !looksUpSharedRows(op));
}

void mlir::ober::gatherTokensFor(Operation *op, SmallVectorImpl<Placement> &in) {
  auto matmul = dyn_cast<MatmulOp>(op);
  if (!matmul)
    return;
  auto a = cast<RankedTensorType>(matmul.getLhs().getType());
  auto b = cast<RankedTensorType>(matmul.getRhs().getType());
  auto c = cast<RankedTensorType>(matmul.getResult().getType());
  if (a.getRank() < 2 || b.getRank() < 2)
    return;
  if (isActivationMatmul(op)) {
    if (in[1].isRep() && in[0].isSplit() && in[0].dim == a.getRank() - 2)
      in[0] = Placement::rep();
    return;
  }
  bool aK = in[0].isSplit() && in[0].dim == a.getRank() - 1 && in[1].isRep();
  bool bK = in[1].isSplit() && in[1].dim == b.getRank() - 2 && in[0].isRep();
  if ((aK || bK) &&
      (aK ? a : b).getNumElements() <= 2 * c.getNumElements())
    in[aK ? 0 : 1] = Placement::rep();
}
