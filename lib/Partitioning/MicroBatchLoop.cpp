//===- MicroBatchLoop.cpp - the micro-batch loop on every device ----------===//
//
// Part of Ober-Train. Every stage's program keeps the serial step's loop
// over micro-batches as loops. One micro-batch is built once per stage on
// local operands: the loop body's ops before the gradient function (the
// micro-batch's samples), the inlined gradient function's passes (the
// stage's forward and backward pass per model chunk), the ops after it (the
// accumulation). `emitMicroBatches` (MicroBatches.cpp) then writes them in
// the order of the plan's schedule, as loops. Each carried value takes the
// layout the body gives it: a gradient sum stays a partial sum over the
// data-parallel devices (zeros to start with), reduced once after the
// loop; a buffer (batch-norm running statistics) keeps its argument's
// layout. The micro-batch index is not carried: each run knows its own.
//
//===----------------------------------------------------------------------===//

#include "MicroBatches.h"
#include "StepPartitioner.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::partition;

namespace {
std::optional<int64_t> scalarInteger(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  auto attr = c ? dyn_cast<DenseIntElementsAttr>(c.getValue()) : nullptr;
  if (!attr || !attr.isSplat() ||
      cast<ShapedType>(attr.getType()).getRank() != 0)
    return std::nullopt;
  return attr.getSplatValue<APInt>().getSExtValue();
}

/// The carried value that counts the micro-batches, `start + step * i` in
/// iteration i: (its position, start, step).
struct MicroIndex {
  unsigned k;
  int64_t start, step;
};

std::optional<MicroIndex> microIndexOf(scf::ForOp loop) {
  Operation *yield = loop.getBody()->getTerminator();
  for (auto [k, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
    auto add = yield->getOperand(k).getDefiningOp<AddOp>();
    if (!add || (add.getLhs() != arg && add.getRhs() != arg))
      continue;
    Value other = add.getLhs() == arg ? add.getRhs() : add.getLhs();
    std::optional<int64_t> start = scalarInteger(loop.getInitArgs()[k]);
    std::optional<int64_t> step = scalarInteger(other);
    if (start && step)
      return MicroIndex{static_cast<unsigned>(k), *start, *step};
  }
  return std::nullopt;
}
} // namespace

Value StepPartitioner::carriedArgument(scf::ForOp loop, unsigned stage,
                                       unsigned k, const Layout &layout) {
  LoopTemplate &tmpl = templates[stage];
  if (Value arg = tmpl.carriedArgs.lookup(k))
    return arg;
  Value serialInit = loop.getInitArgs()[k];
  auto global = cast<RankedTensorType>(serialInit.getType());
  RankedTensorType type = spmd->localType(global, layout);
  Value init;
  {
    // Before the loop: zeros in any layout (each device's zeros sum to
    // zeros), else the initial value moved there.
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(stages[stage].pre);
    init = fetch(stage, serialInit, -1, loop.getLoc());
    if (!init)
      return Value();
    if (isZeros(serialInit) && layout != spmd->layoutOf(init)) {
      assert(llvm::all_of(layout, [](Placement p) {
               return !p.isPartial() || p.isPartialSum();
             }) && "zeros start partial sums only");
      init = ConstantOp::create(
          builder, loop.getLoc(),
          cast<DenseElementsAttr>(builder.getZeroAttr(type)));
    } else {
      init = spmd->reshard(init, layout, loop.getLoc());
    }
  }
  spmd->setLayout(init, layout);
  Value arg = tmpl.args->addArgument(type, loop.getLoc());
  spmd->setLayout(arg, layout);
  tmpl.carriedOrder.push_back(k);
  tmpl.carriedInit.push_back(init);
  tmpl.carriedArgs[k] = arg;
  maps[0][stage].map(loop.getRegionIterArgs()[k], arg);
  return arg;
}

LogicalResult StepPartitioner::buildLoop(scf::ForOp loop) {
  Location loc = loop.getLoc();
  unsigned n = stages.size();
  templates.assign(n, LoopTemplate());
  // The templates go once written out, or on an error (their ops read the
  // stages' values).
  llvm::scope_exit discard([&] {
    SmallVector<Block *> blocks;
    for (auto [t, tmpl] : llvm::enumerate(templates)) {
      blocks.append({tmpl.args, tmpl.head, tmpl.tail});
      llvm::append_range(blocks, tmpl.weights);
      for (auto &[key, block] : stages[t].phases)
        blocks.push_back(block);
      stages[t].phases.clear();
    }
    for (Block *block : blocks) {
      spmd->forgetValuesIn(block);
      for (Operation &op : *block)
        op.dropAllReferences();
    }
    for (Block *block : blocks) {
      block->dropAllUses();
      delete block;
    }
    templates.clear();
    again.clear();
    inLoopTail = false;
  });
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()),
                         upper = getConstantIntValue(loop.getUpperBound()),
                         stride = getConstantIntValue(loop.getStep());
  if (!lower || !upper || !stride || *stride <= 0 ||
      (*upper - *lower + *stride - 1) / *stride != plan.microBatches)
    return loop.emitError("ober-partition: the micro-batch loop must run the "
                          "plan's ")
           << plan.microBatches << " micro-batches";
  std::optional<MicroIndex> index = microIndexOf(loop);
  auto iterArgs = loop.getRegionIterArgs();
  for (unsigned t = 0; t < n; ++t) {
    LoopTemplate &tmpl = templates[t];
    tmpl.args = new Block();
    tmpl.head = new Block();
    tmpl.tail = new Block();
    if (!index)
      continue;
    tmpl.index = tmpl.args->addArgument(
        RankedTensorType::get({}, builder.getI64Type()), loc);
    tmpl.indexStart = index->start;
    tmpl.indexStep = index->step;
    spmd->setLayout(tmpl.index, spmd->replicated());
    maps[0][t].map(iterArgs[index->k], tmpl.index);
  }
  auto holds = [&](unsigned t, Value serial) {
    int s = stageOf(serial);
    return s < 0 || s == static_cast<int>(t);
  };
  auto carriedIndex = [&](Value v) -> std::optional<unsigned> {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != loop.getBody() || arg.getArgNumber() == 0 ||
        (index && arg.getArgNumber() - 1 == index->k))
      return std::nullopt;
    return arg.getArgNumber() - 1;
  };
  // A carried value whose start is not zeros (a buffer) keeps its initial
  // layout; a sum takes the layout of what is first added to it.
  for (auto [k, init] : llvm::enumerate(loop.getInitArgs())) {
    if (isZeros(init) || (index && k == index->k))
      continue;
    for (unsigned t = 0; t < n; ++t) {
      if (!holds(t, iterArgs[k]))
        continue;
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToEnd(stages[t].pre);
      Value local = fetch(t, init, -1, loc);
      if (!local || !carriedArgument(loop, t, k, spmd->layoutOf(local)))
        return failure();
    }
  }
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (failed(inlineCall(call, 0)))
        return failure();
      inLoopTail = true;
      continue;
    }
    int s = opStage.lookup_or(&op, -1);
    for (unsigned t = 0; t < n; ++t) {
      if (s >= 0 && s != static_cast<int>(t))
        continue;
      for (Value v : op.getOperands()) {
        std::optional<unsigned> k = carriedIndex(v);
        if (!k || templates[t].carriedArgs.count(*k))
          continue;
        Value init = maps[0][t].lookupOrNull(loop.getInitArgs()[*k]);
        Layout layout = init ? spmd->layoutOf(init) : spmd->replicated();
        for (Value other : op.getOperands())
          if (other != v && other.getType() == v.getType())
            if (Value local = maps[0][t].lookupOrNull(other))
              layout = spmd->layoutOf(local);
        if (!carriedArgument(loop, t, *k, layout))
          return failure();
      }
    }
    if (failed(buildStepOp(op)))
      return failure();
  }
  // Every stage's carried values, then its micro-batches in schedule order.
  Operation *yield = loop.getBody()->getTerminator();
  for (unsigned t = 0; t < n; ++t)
    for (auto [k, v] : llvm::enumerate(yield->getOperands())) {
      if ((index && k == index->k) || !holds(t, v))
        continue;
      if (Value local = maps[0][t].lookupOrNull(v))
        if (!carriedArgument(loop, t, k, spmd->layoutOf(local)))
          return failure();
    }
  for (unsigned t = 0; t < n; ++t)
    if (failed(emitLoop(loop, t)))
      return failure();
  if (index && !loop.getResult(index->k).use_empty()) {
    int64_t trips = plan.microBatches;
    for (unsigned t = 0; t < n; ++t) {
      builder.setInsertionPointToEnd(stages[t].pre);
      auto type = RankedTensorType::get({}, builder.getI64Type());
      maps[0][t].map(loop.getResult(index->k),
                     ConstantOp::create(builder, loc,
                                        DenseElementsAttr::get(
                                            type, {index->start +
                                                   index->step * trips})));
    }
  }
  // The loop's results stand for the serial loop's; a sum of gradients
  // (or of the loss) keeps its tag, to be reduced where first needed.
  for (auto [k, yielded] : llvm::enumerate(yield->getOperands())) {
    Value serial = loop.getResult(k);
    if (auto t = tags.find(yielded); t != tags.end()) {
      unsigned tag = t->second; // tags[serial] may move the entries
      tags[serial] = tag;
      if (latest.lookup(tag) == yielded)
        latest[tag] = serial;
    }
    afterCalls.insert(serial);
  }
  return success();
}

LogicalResult StepPartitioner::emitLoop(scf::ForOp loop, unsigned stage) {
  Location loc = loop.getLoc();
  LoopTemplate &tmpl = templates[stage];
  Stage &s = stages[stage];
  Operation *yield = loop.getBody()->getTerminator();
  MicroBatchTemplate micro;
  micro.index = tmpl.index;
  micro.indexStart = tmpl.indexStart;
  micro.indexStep = tmpl.indexStep;
  // The value each carried value holds after a micro-batch, in its layout,
  // moved where it is made.
  for (auto [j, k] : llvm::enumerate(tmpl.carriedOrder)) {
    Value serial = yield->getOperand(k);
    Value local = maps[0][stage].lookupOrNull(serial);
    if (!local)
      return loop.emitError("ober-partition: internal error: stage ")
             << stage << " carries value " << k
             << " of the micro-batch loop but does not compute it";
    Value arg = tmpl.carriedArgs.lookup(k);
    OpBuilder::InsertionGuard guard(builder);
    Operation *def = local.getDefiningOp();
    if (def && def->getBlock() != s.pre && def->getBlock() != s.entry)
      builder.setInsertionPointAfter(def);
    else
      builder.setInsertionPointToEnd(tmpl.tail);
    micro.carried.push_back(arg);
    micro.initial.push_back(tmpl.carriedInit[j]);
    micro.next.push_back(spmd->reshard(local, spmd->layoutOf(arg), loc));
  }
  // Units: the body's ops before the passes, each pass, the ops after.
  DenseMap<std::tuple<unsigned, unsigned, unsigned>, unsigned> unitOf;
  micro.units.push_back(tmpl.head);
  for (auto &[key, block] : s.phases) {
    auto [m, backward, chunk] = key;
    unitOf[{0u, backward ? 1u : 0u, chunk}] = micro.units.size();
    micro.units.push_back(block);
    if (backward && plan.schedule == Schedule::ZeroBubble) {
      Block *weights = splitWeightGradients(block);
      unitOf[{0u, 2u, chunk}] = micro.units.size();
      micro.units.push_back(weights);
      tmpl.weights.push_back(weights);
    }
  }
  unsigned head = 0, tail = micro.units.size();
  micro.units.push_back(tmpl.tail);
  // The order: each micro-batch's head before its first pass, its tail
  // after its last.
  SmallVector<UnitRun> passes;
  for (auto [m, kind, chunk] : schedule(stage))
    if (auto it = unitOf.find({0u, kind, chunk}); it != unitOf.end())
      passes.push_back({it->second, m});
  int64_t count = plan.microBatches;
  SmallVector<size_t> first(count, SIZE_MAX), last(count, 0);
  for (auto [i, run] : llvm::enumerate(passes)) {
    first[run.micro] = std::min(first[run.micro], i);
    last[run.micro] = std::max(last[run.micro], i);
  }
  SmallVector<UnitRun> order;
  for (auto [i, run] : llvm::enumerate(passes)) {
    if (first[run.micro] == i)
      order.push_back({head, run.micro});
    order.push_back(run);
    if (last[run.micro] == i)
      order.push_back({tail, run.micro});
  }
  for (int64_t m = 0; m < count; ++m)
    if (first[m] == SIZE_MAX)
      order.append({{head, m}, {tail, m}});
  builder.setInsertionPointToEnd(s.pre);
  FailureOr<SmallVector<Value>> finals =
      emitMicroBatches(builder, *spmd, micro, order, loc);
  if (failed(finals))
    return failure();
  for (auto [j, k] : llvm::enumerate(tmpl.carriedOrder)) {
    spmd->setLayout((*finals)[j], spmd->layoutOf(micro.carried[j]));
    maps[0][stage].map(loop.getResult(k), (*finals)[j]);
  }
  return success();
}
