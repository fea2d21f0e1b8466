//===- MemoryModel.cpp - bytes a device holds -----------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/MemoryModel.h"

#include "ober/Planning/CostModel.h"

#include "ober/Dialect/Ober/IR/TensorSizes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

static int64_t bytesOf(Type t) {
  return static_cast<int64_t>(mlir::ober::planning::typeBytes(t));
}

/// Walks `block` like the interpreter, updating `live` and `peak`.
static LogicalResult walkBlock(Block &block, ModuleOp module, int64_t &live,
                               int64_t &peak, int depth,
                               const DenseSet<Value> &excluded) {
  if (depth > 64)
    return block.getParentOp()->emitError("calls nest too deeply");
  mlir::ober::LastUses uses = mlir::ober::lastUsesIn(block);
  for (Operation &op : block) {
    if (isa<func::ReturnOp, scf::YieldOp>(op)) {
      for (Value v : op.getOperands())
        if (!isa<BlockArgument>(v) && !excluded.contains(v))
          live -= bytesOf(v.getType());
      return success();
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal())
        return op.emitError("no body for callee @") << call.getCallee();
      if (failed(walkBlock(callee.getBody().front(), module, live, peak,
                           depth + 1, {})))
        return failure();
    }
    // A loop (the micro-batches): one iteration's values on top of what
    // it carries.
    if (auto loop = dyn_cast<scf::ForOp>(op))
      if (failed(walkBlock(*loop.getBody(), module, live, peak, depth + 1,
                           {})))
        return failure();
    for (Value r : op.getResults())
      if (!excluded.contains(r))
        live += bytesOf(r.getType());
    peak = std::max(peak, live);
    for (Value v : uses.dyingAt.lookup(&op))
      if (!isa<BlockArgument>(v) && !excluded.contains(v) &&
          v.getParentBlock() == &block)
        live -= bytesOf(v.getType());
    for (Value r : op.getResults())
      if (r.use_empty())
        live -= bytesOf(r.getType());
  }
  return success();
}

double mlir::ober::planning::optimizerSlots(StringRef optimizer) {
  return optimizer.starts_with("adam")  ? 2
         : optimizer == "sgd-momentum" ? 1
                                       : 0;
}

mlir::ober::planning::ModelState
mlir::ober::planning::modelStateBytes(double count, int paramBytes,
                                                 bool mixedPrecision,
                                                 StringRef optimizer,
                                                 int zeroStage,
                                                 int64_t dataParallel) {
  // fp32 optimizer slots per parameter: Adam keeps two moments, SGD with
  // momentum one buffer; mixed precision adds an fp32 master copy.
  double slots = optimizerSlots(optimizer);
  if (mixedPrecision)
    slots += 1;
  mlir::ober::planning::ModelState s;
  s.parameters = count * paramBytes;
  s.gradients = count * paramBytes;
  s.optimizer = count * 4 * slots;
  double d = static_cast<double>(std::max<int64_t>(dataParallel, 1));
  // Gradients stay whole until the reduction after the backward passes
  // (MicroBatchLoop.cpp: over micro-batches they add up as partial sums),
  // which under ZeRO 2 and 3 scatters them straight into the update: so
  // stage 2 holds what stage 1 does at the step's peak.
  if (zeroStage >= 1)
    s.optimizer /= d;
  if (zeroStage >= 3)
    s.parameters /= d;
  return s;
}

int64_t mlir::ober::planning::savedActivationBytes(func::FuncOp func) {
  if (func.isExternal() || func.getNumResults() == 0)
    return 0;
  Operation *ret = func.getBody().front().getTerminator();
  DenseSet<Operation *> forward = forwardOps(func);
  int64_t bytes = 0;
  for (Operation *op : forward)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *user) {
            return user != ret && !forward.contains(user);
          }))
        bytes += bytesOf(r.getType());
  return bytes;
}

FailureOr<int64_t> mlir::ober::planning::peakLiveBytes(func::FuncOp func,
                                                      bool countResults) {
  if (func.isExternal())
    return func.emitError("the function has no body");
  DenseSet<Value> excluded;
  if (!countResults)
    for (Value v : func.getBody().front().getTerminator()->getOperands())
      excluded.insert(v);
  int64_t live = 0;
  for (Type t : func.getArgumentTypes())
    live += bytesOf(t);
  int64_t peak = live;
  if (failed(walkBlock(func.getBody().front(),
                       func->getParentOfType<ModuleOp>(), live, peak, 0,
                       excluded)))
    return failure();
  return peak;
}
