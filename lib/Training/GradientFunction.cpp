//===- GradientFunction.cpp - the shape of a gradient function ------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Training/GradientFunction.h"

#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

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
  for (Operation &op : func.getBody().front().without_terminator()) {
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
  // them when what it reads goes there anyway: the gradient of a value
  // read twice then crosses once. Users first (in reverse order), so
  // chains of such ops follow.
  Block &body = func.getBody().front();
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
    bool sentAnyway = llvm::all_of(op.getOperands(), [&](Value v) {
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
