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
