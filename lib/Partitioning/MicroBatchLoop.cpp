//===- MicroBatchLoop.cpp - the micro-batch loop on every device ----------===//
//
// Part of Ober-Train. Without a pipeline, every device runs the step's
// micro-batches one after another, so the partitioned step keeps the
// serial step's `scf.for`: its body (the micro-batch's samples, the
// inlined gradient function, the accumulation) is built once on local
// operands. Each carried value takes the layout the body gives it: a
// gradient sum stays a partial sum over the data-parallel devices (zeros
// to start with), reduced once after the loop; a buffer (batch-norm
// running statistics) keeps its argument's layout. Pipelines interleave
// the micro-batches by their schedule instead (the loop is unrolled
// first).
//
//===----------------------------------------------------------------------===//

#include "StepPartitioner.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::partition;

Value StepPartitioner::carriedArgument(scf::ForOp loop, unsigned k,
                                       const Layout &layout) {
  if (Value arg = carriedArgs.lookup(k))
    return arg;
  Value serialInit = loop.getInitArgs()[k];
  auto global = cast<RankedTensorType>(serialInit.getType());
  RankedTensorType type = spmd->localType(global, layout);
  Value init = maps[0][0].lookup(serialInit);
  {
    // Before the loop: zeros in any layout (each device's zeros sum to
    // zeros), else the initial value moved there.
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(stages[0].pre);
    if (isZeros(serialInit) && layout != spmd->layoutOf(init)) {
      assert(llvm::all_of(layout, [](Placement p) {
               return !p.isPartial() || p.isPartialSum();
             }) && "zeros start partial sums only");
      init = ConstantOp::create(builder, loop.getLoc(),
                                cast<DenseElementsAttr>(builder.getZeroAttr(type)));
    }
    else
      init = spmd->reshard(init, layout, loop.getLoc());
  }
  spmd->setLayout(init, layout);
  Value arg = loopBody->addArgument(type, loop.getLoc());
  spmd->setLayout(arg, layout);
  carriedOrder.push_back(k);
  carriedInit.push_back(init);
  carriedArgs[k] = arg;
  maps[0][0].map(loop.getRegionIterArgs()[k], arg);
  return arg;
}

LogicalResult StepPartitioner::buildLoop(scf::ForOp loop) {
  Location loc = loop.getLoc();
  IRMapping &map = maps[0][0];
  loopBody = new Block();
  // On an error the local body goes (its ops read the stage's values).
  llvm::scope_exit discard([&] {
    if (!loopBody)
      return;
    for (Operation &op : *loopBody)
      op.dropAllReferences();
    delete loopBody;
    loopBody = nullptr;
  });
  loopBody->addArgument(builder.getIndexType(), loc);
  carriedOrder.clear();
  carriedInit.clear();
  carriedArgs.clear();
  // A carried value whose start is not zeros (the index, a buffer) keeps
  // its initial layout; a sum takes the layout of what is first added to
  // it.
  auto carriedIndex = [&](Value v) -> std::optional<unsigned> {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != loop.getBody() || arg.getArgNumber() == 0)
      return std::nullopt;
    return arg.getArgNumber() - 1;
  };
  for (auto [k, init] : llvm::enumerate(loop.getInitArgs()))
    if (!isZeros(init))
      carriedArgument(loop, k, spmd->layoutOf(map.lookup(init)));
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (failed(inlineCall(call, 0)))
        return failure();
      // The micro-batch's passes run in the body, in order.
      for (bool backward : {false, true}) {
        auto &phases = stages[0].phases;
        auto it = phases.find({0u, backward, 0u});
        if (it == phases.end())
          continue;
        loopBody->getOperations().splice(loopBody->end(),
                                         it->second->getOperations());
        delete it->second;
        phases.erase(it);
      }
      continue;
    }
    for (Value v : op.getOperands()) {
      std::optional<unsigned> k = carriedIndex(v);
      if (!k || carriedArgs.count(*k))
        continue;
      // A sum: the layout of the local operand of its type it is added to.
      Layout layout = spmd->layoutOf(map.lookup(loop.getInitArgs()[*k]));
      for (Value other : op.getOperands())
        if (other != v && other.getType() == v.getType())
          if (Value local = map.lookupOrNull(other))
            layout = spmd->layoutOf(local);
      carriedArgument(loop, *k, layout);
    }
    if (failed(buildStepOp(op)))
      return failure();
  }
  // The next iteration's values, in the arguments' layouts.
  Operation *yield = loop.getBody()->getTerminator();
  builder.setInsertionPointToEnd(loopBody);
  for (auto [k, v] : llvm::enumerate(yield->getOperands()))
    carriedArgument(loop, k, spmd->layoutOf(map.lookup(v)));
  SmallVector<Value> next;
  for (auto [j, k] : llvm::enumerate(carriedOrder))
    next.push_back(spmd->reshard(map.lookup(yield->getOperand(k)),
                                 spmd->layoutOf(carriedArgs[k]), loc));
  scf::YieldOp::create(builder, loc, next);

  // The loop, after what the step computes before it.
  builder.setInsertionPointToEnd(stages[0].pre);
  auto bound = [&](Value serial) {
    return arith::ConstantIndexOp::create(
        builder, loc, *getConstantIntValue(serial));
  };
  auto local = scf::ForOp::create(builder, loc, bound(loop.getLowerBound()),
                                  bound(loop.getUpperBound()),
                                  bound(loop.getStep()), carriedInit);
  Block *body = local.getBody();
  for (Operation &op : llvm::make_early_inc_range(*body))
    op.erase();
  for (auto [from, to] :
       llvm::zip(loopBody->getArguments(), body->getArguments())) {
    spmd->setLayout(to, spmd->layoutOf(from));
    spmd->forgetLayout(from);
    from.replaceAllUsesWith(to);
  }
  body->getOperations().splice(body->end(), loopBody->getOperations());
  delete loopBody;
  loopBody = nullptr;
  spmd->forgetMovesIn(local.getRegion());
  // The loop's results stand for the serial loop's; a sum of gradients
  // (or of the loss) keeps its tag, to be reduced where first needed.
  for (auto [j, k] : llvm::enumerate(carriedOrder)) {
    Value serial = loop.getResult(k), result = local.getResult(j);
    spmd->setLayout(result, spmd->layoutOf(body->getArgument(1 + j)));
    map.map(serial, result);
    Value yielded = yield->getOperand(k);
    if (auto t = tags.find(yielded); t != tags.end()) {
      tags[serial] = t->second;
      if (latest.lookup(t->second) == yielded)
        latest[t->second] = serial;
    }
    afterCalls.insert(serial);
  }
  return success();
}
