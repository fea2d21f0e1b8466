//===- Stages.cpp - pipeline stages, transfers and the schedule -----------===//
//
// Part of Ober-Train. Every op of the step, and of the gradient function
// inlined once (for the micro-batch loop's body, MicroBatchLoop.cpp, or for
// the step's one micro-batch), runs in one pipeline stage: forward ops in
// the stage the plan gave them (`ober.stage`); a backward op in the lowest
// stage among what it reads (a forward value counts for the stage that
// consumes it, so the gradient of a stage's input stays there); an op that
// reads nothing staged (constants, the batch, the step counter) wherever
// it is needed. A value one stage computes and another reads travels by
// `shard.send`/`shard.recv` along the pipeline axis, matched by an
// `ober.tag`. Each stage's program is its ops before the micro-batches,
// then each micro-batch's forward and backward pass in the order of the
// plan's schedule (as loops, MicroBatches.cpp), then the optimizer.
//
//===----------------------------------------------------------------------===//

#include "StepPartitioner.h"

#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Dialect/Ober/IR/PipelineOrder.h"
#include "ober/Training/GradientFunction.h"

#include "llvm/ADT/ScopeExit.h"

#include <functional>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::partition;

namespace {
int minStage(int a, int b) { return a < 0 ? b : b < 0 ? a : std::min(a, b); }
} // namespace

int StepPartitioner::stageOf(Value serial) const {
  return valueStage.lookup_or(serial, -1);
}

LogicalResult StepPartitioner::assignStages() {
  Block &body = step.getBody().front();
  // In order: the step's calls, or the one in its micro-batch loop.
  step.walk([&](func::CallOp call) { calls.push_back(call); });
  if (calls.empty())
    return step.emitError("ober-partition: the step calls no gradient function");
  grad = module.lookupSymbol<func::FuncOp>(calls.front().getCallee());
  for (func::CallOp call : calls)
    if (call.getCallee() != calls.front().getCallee() || !grad ||
        grad.isExternal())
      return call.emitError("ober-partition: cannot inline '")
             << call.getCallee() << "': the step's calls must all reach one "
             << "gradient function with a body in the module";
  forward = forwardOps(grad);
  // Stages are virtual (chunk * pp + stage) while they are assigned, so
  // the interleaved schedule's chunks order like the stages they are.
  int64_t chunks = plan.pp > 1 ? std::max<int64_t>(plan.chunks, 1) : 1;
  int last = static_cast<int>(plan.pp * chunks) - 1;
  auto planned = [&](Operation *op) -> int {
    auto s = op->getAttrOfType<IntegerAttr>("ober.stage");
    if (!s)
      return -1;
    if (plan.pp == 1)
      return 0;
    auto c = op->getAttrOfType<IntegerAttr>("ober.chunk");
    int64_t v = (c ? c.getInt() : 0) * plan.pp + s.getInt();
    return std::min<int>(v, last);
  };

  // The gradient function's forward ops in their planned stage, except
  // those that read no activation (views of parameters, constants): they
  // run wherever they are used. Every stage's program has all parameters,
  // so reading one costs no transfer; a parameter's update runs where its
  // gradient is computed.
  Block &g = grad.getBody().front();
  DenseSet<Value> activations;
  for (BlockArgument arg : g.getArguments()) {
    valueStage[arg] = -1;
    if (!grad.getArgAttr(arg.getArgNumber(), OberDialect::kParamAttrName))
      activations.insert(arg);
  }
  for (Operation &op : g.without_terminator()) {
    if (!forward.contains(&op))
      continue;
    bool active = llvm::any_of(op.getOperands(), [&](Value v) {
      return activations.contains(v);
    });
    int s = -1;
    if (active) {
      s = planned(&op);
      for (Value v : op.getOperands())
        if (s < 0)
          s = minStage(s, valueStage.lookup_or(v, -1));
      if (s < 0)
        s = 0;
      for (Value r : op.getResults())
        activations.insert(r);
    }
    opStage[&op] = s;
    for (Value r : op.getResults())
      valueStage[r] = s;
  }
  // Backward ops by what they read (placeBackwardOps): a forward value
  // counts in the latest stage that consumes it.
  DenseMap<Operation *, int> backwardStage =
      placeBackwardOps(grad, forward, opStage);
  for (Operation &op : g.without_terminator()) {
    if (forward.contains(&op))
      continue;
    int s = backwardStage.lookup_or(&op, -1);
    opStage[&op] = s;
    for (Value r : op.getResults())
      valueStage[r] = s;
  }

  // The step: call results in the stage that computes them; other ops by
  // what they read (arguments are in every stage).
  Operation *ret = g.getTerminator();
  std::function<void(Operation &)> placeStepOp = [&](Operation &op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      for (auto [r, v] : llvm::zip(call.getResults(), ret->getOperands())) {
        valueStage[r] = valueStage.lookup_or(v, -1);
        afterCalls.insert(r);
      }
      return;
    }
    // The micro-batch loop: its body's ops as the step's; a carried value
    // lives in the stage that computes its next value (placed again once
    // that is known), and its result comes after the calls.
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      opStage[&op] = -1;
      Block *inner = loop.getBody();
      Operation *yield = inner->getTerminator();
      for (int pass = 0; pass < 2; ++pass) {
        for (Operation &o : inner->without_terminator())
          placeStepOp(o);
        for (auto [arg, next, result] :
             llvm::zip(loop.getRegionIterArgs(), yield->getOperands(),
                       loop.getResults())) {
          valueStage[arg] = valueStage.lookup_or(next, -1);
          valueStage[result] = valueStage[arg];
          afterCalls.insert(result);
        }
      }
      return;
    }
    // An op runs in the earliest stage of the tensors it reads (a
    // parameter's update where its gradient is); scalars follow the tensor
    // and are sent there. An op of scalars only runs in the latest stage
    // they come from, so a sum over every gradient (a clipping norm, an
    // overflow probe) crosses each stage boundary once.
    int s = -1, scalars = -1;
    bool after = false;
    for (Value v : op.getOperands()) {
      int from = valueStage.lookup_or(v, -1);
      if (cast<RankedTensorType>(v.getType()).getRank() > 0)
        s = minStage(s, from);
      else
        scalars = std::max(scalars, from);
      after |= afterCalls.contains(v);
    }
    if (s < 0)
      s = scalars;
    opStage[&op] = s;
    for (Value r : op.getResults()) {
      valueStage[r] = s;
      if (after)
        afterCalls.insert(r);
    }
  };
  for (Operation &op : body.without_terminator())
    placeStepOp(op);
  // Virtual stages to devices and chunks.
  for (auto &[op, s] : opStage)
    if (s >= 0) {
      opChunk[op] = s / plan.pp;
      s %= plan.pp;
    }
  for (auto &[v, s] : valueStage)
    if (s >= 0)
      s %= plan.pp;
  return success();
}

Block *StepPartitioner::phase(unsigned stage, unsigned micro, bool backward,
                              unsigned chunk) {
  Block *&b = stages[stage].phases[{micro, backward, chunk}];
  if (!b)
    b = new Block();
  return b;
}

Value StepPartitioner::asRank(Value v, ArrayRef<int64_t> shape,
                              Location loc) {
  auto type = cast<RankedTensorType>(v.getType());
  Value r = ReshapeOp::create(builder, loc, type.clone(shape), v);
  spmd->setLayout(r, spmd->layoutOf(v));
  return r;
}

Value StepPartitioner::fetch(unsigned stage, Value serial, int scope,
                             Location loc) {
  IRMapping &map = maps[scope + 1][stage];
  if (Value v = map.lookupOrNull(serial))
    return v;
  // An argument of the gradient function: the call's operand; a ZeRO-3
  // parameter is gathered for this micro-batch.
  if (auto arg = dyn_cast<BlockArgument>(serial);
      arg && scope >= 0 && arg.getOwner() == &grad.getBody().front()) {
    auto [local, sharded] = argumentOf(stage, scope, arg, loc);
    if (local && sharded)
      local = spmd->reshard(lowered(local, loc), kDp, Placement::rep(), loc,
                            /*again=*/true);
    else
      local = lowered(local, loc);
    if (local)
      map.map(serial, local);
    return local;
  }
  int from = stageOf(serial);
  Value remote =
      from >= 0 ? maps[scope + 1][from].lookupOrNull(serial) : Value();
  if (!remote || from == static_cast<int>(stage)) {
    emitError(loc) << "ober-partition: internal error: a value of stage "
                   << from << " is not available to stage " << stage;
    return Value();
  }
  // Sent by its stage once computed, received here where first needed.
  // A value whole on the tensor-parallel ranks travels as each rank's
  // share and is gathered on arrival (Megatron's scatter-gather).
  auto gridRef = FlatSymbolRefAttr::get(spmd->getGrid().getSymNameAttr());
  auto axes = builder.getDenseI16ArrayAttr({static_cast<int16_t>(kPp)});
  auto tag = builder.getI64IntegerAttr(nextTag++);
  int64_t share = -1;
  if (plan.tp > 1 && spmd->layoutOf(remote)[kTp].isRep()) {
    RankedTensorType global = spmd->globalTypeOf(remote);
    Layout layout = spmd->layoutOf(remote);
    for (int64_t d = global.getRank() - 1; d >= 0 && share < 0; --d) {
      bool taken = llvm::any_of(layout, [&](Placement p) {
        return p.isSplit() && p.dim == d;
      });
      if (!taken && global.getDimSize(d) % plan.tp == 0)
        share = d;
    }
  }
  Location remoteLoc = remote.getLoc();
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(remote.getParentBlock());
    if (share >= 0)
      remote = spmd->reshard(remote, kTp, Placement::split(share), remoteLoc);
    // shard.send/recv move ranked tensors: a scalar travels as tensor<1>.
    if (cast<RankedTensorType>(remote.getType()).getRank() == 0)
      remote = asRank(remote, {1}, loc);
    auto send = shard::SendOp::create(
        builder, loc, remote.getType(), gridRef, axes, remote,
        builder.getDenseI64ArrayAttr({static_cast<int64_t>(stage)}), {});
    send->setAttr("ober.tag", tag);
  }
  auto type = cast<RankedTensorType>(remote.getType());
  Value buffer = ConstantOp::create(
      builder, loc, cast<DenseElementsAttr>(builder.getZeroAttr(type)));
  auto recv = shard::RecvOp::create(
      builder, loc, type, gridRef, axes, buffer,
      builder.getDenseI64ArrayAttr({static_cast<int64_t>(from)}), {});
  recv->setAttr("ober.tag", tag);
  spmd->setLayout(recv, spmd->layoutOf(remote));
  Value local = recv.getResult();
  if (cast<RankedTensorType>(serial.getType()).getRank() == 0)
    local = asRank(local, {}, loc);
  if (share >= 0)
    local = spmd->reshard(local, kTp, Placement::rep(), loc);
  map.map(serial, local);
  return local;
}

std::pair<Value, bool>
StepPartitioner::argumentOf(unsigned stage, unsigned micro, BlockArgument arg,
                            Location loc) {
  Value operand = calls[micro].getOperand(arg.getArgNumber());
  Value local = fetch(stage, operand, -1, loc);
  auto p = dyn_cast<BlockArgument>(operand);
  bool sharded = local && p && p.getOwner() == &step.getBody().front() &&
                 llvm::is_contained(params, p.getArgNumber()) &&
                 spmd->layoutOf(local)[kDp].isSplit();
  return {local, sharded};
}

Value StepPartitioner::backwardValue(unsigned stage, unsigned micro, Value v) {
  DenseMap<Value, Value> &copies = again[{stage, micro}];
  if (auto it = copies.find(v); it != copies.end())
    return it->second;
  Location loc = v.getLoc();
  // ZeRO-3: a parameter is gathered again for the backward pass.
  if (auto arg = dyn_cast<BlockArgument>(v);
      arg && arg.getOwner() == &grad.getBody().front()) {
    auto [local, sharded] = argumentOf(stage, micro, arg, loc);
    if (!local || !sharded)
      return Value();
    return copies[v] = spmd->reshard(lowered(local, loc), kDp,
                                     Placement::rep(), loc, /*again=*/true);
  }
  // Recomputed forward ops, and views of what is gathered again, run again
  // from the values they read.
  Operation *def = v.getDefiningOp();
  int at = def ? opStage.lookup_or(def, -1) : -1;
  if (!def || !forward.contains(def) ||
      (at >= 0 && at != static_cast<int>(stage)) ||
      !(def->hasAttr("ober.recompute") ||
        (def->getNumOperands() == 1 && isa<TransposeOp, ReshapeOp, CastOp>(def))))
    return Value();
  IRMapping operands;
  bool changed = def->hasAttr("ober.recompute");
  for (Value o : def->getOperands()) {
    Value c = backwardValue(stage, micro, o);
    changed |= static_cast<bool>(c);
    operands.map(o, c ? c : fetch(stage, o, micro, loc));
  }
  if (!changed || failed(spmd->rebuild(def, operands)))
    return Value();
  for (Value r : def->getResults())
    copies[r] = operands.lookup(r);
  return copies.lookup(v);
}

Value StepPartitioner::lowered(Value local, Location loc) {
  if (!local || !compute)
    return local;
  auto type = cast<RankedTensorType>(local.getType());
  if (!type.getElementType().isF32())
    return local;
  Value cast = CastOp::create(builder, loc, type.clone(compute), local);
  spmd->setLayout(cast, spmd->layoutOf(local));
  return cast;
}

LogicalResult StepPartitioner::inlineCall(func::CallOp call, unsigned micro) {
  // Mixed precision: the gradient function computes in bf16 on casts of
  // the f32 parameters and batch; its results return to f32.
  spmd->setComputeType(compute);
  llvm::scope_exit restore([&] { spmd->setComputeType(Type()); });
  bool regather = plan.zero >= 3 && plan.dp > 1;
  bool recompute = plan.recompute != Recompute::None;
  spmd->forgetMovesOfArguments();
  Block &body = grad.getBody().front();
  for (Operation &op : body.without_terminator()) {
    if (isa<func::CallOp>(op))
      return op.emitError("ober-partition: calls inside '")
             << grad.getSymName() << "' are not supported";
    bool backward = !forward.contains(&op);
    int s = opStage.lookup_or(&op, -1);
    for (unsigned t = 0; t < stages.size(); ++t) {
      if (s >= 0 && s != static_cast<int>(t))
        continue;
      // Ops of no stage go where every user of the micro-batch comes
      // later: the first chunk's forward pass, the last chunk's backward.
      unsigned chunk = s >= 0 ? opChunk.lookup(&op)
                       : backward ? std::max<int64_t>(plan.chunks, 1) - 1
                                  : 0;
      if (plan.pp == 1)
        chunk = 0;
      builder.setInsertionPointToEnd(phase(t, micro, backward, chunk));
      IRMapping &map = maps[micro + 1][t];
      SmallVector<std::pair<Value, Value>> restore;
      for (Value v : op.getOperands()) {
        Value copy = backward && (regather || recompute)
                         ? backwardValue(t, micro, v)
                         : Value();
        if (copy) {
          restore.push_back({v, map.lookupOrNull(v)});
          map.map(v, copy);
        } else if (!fetch(t, v, micro, op.getLoc())) {
          return failure();
        }
      }
      if (failed(spmd->rebuild(&op, map)))
        return failure();
      for (auto [v, original] : restore)
        if (original)
          map.map(v, original);
        else
          map.erase(v);
    }
  }
  // The call's results: the loss, and one gradient per parameter last.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [result, value] : llvm::zip(call.getResults(), ret.getOperands())) {
    int s = stageOf(value);
    for (unsigned t = 0; t < stages.size(); ++t)
      if (s < 0 || s == static_cast<int>(t)) {
        builder.setInsertionPointToEnd(phase(t, micro, true));
        Value local = fetch(t, value, micro, call.getLoc());
        if (!local)
          return failure();
        auto type = cast<RankedTensorType>(local.getType());
        if (compute && type.getElementType() == compute &&
            cast<RankedTensorType>(result.getType()).getElementType().isF32()) {
          // Where the value is made, so that a batch-norm statistic the
          // next micro-batch's forward pass reads is ready there.
          OpBuilder::InsertionGuard guard(builder);
          if (Operation *def = local.getDefiningOp())
            builder.setInsertionPointAfter(def);
          Value f32 = CastOp::create(builder, call.getLoc(),
                                     type.clone(builder.getF32Type()), local);
          spmd->setLayout(f32, spmd->layoutOf(local));
          local = f32;
        }
        maps[0][t].map(result, local);
      }
  }
  unsigned numResults = call.getNumResults();
  tags[call.getResult(0)] = params.size();
  latest[params.size()] = call.getResult(0);
  if (numResults >= params.size() + 1)
    for (unsigned k = 0; k < params.size(); ++k) {
      Value g = call.getResult(numResults - params.size() + k);
      tags[g] = k;
      latest[k] = g;
    }
  return success();
}

LogicalResult StepPartitioner::buildStepOp(Operation &op) {
  int s = opStage.lookup_or(&op, -1);
  bool after = llvm::any_of(op.getResults(), [&](Value r) {
    return afterCalls.contains(r);
  }) || llvm::any_of(op.getOperands(), [&](Value v) { return afterCalls.contains(v); });
  bool accumulation = isAccumulation(&op);
  if (accumulation)
    tag(&op);
  for (unsigned t = 0; t < stages.size(); ++t) {
    if (s >= 0 && s != static_cast<int>(t))
      continue;
    builder.setInsertionPointToEnd(
        !templates.empty() ? (inLoopTail ? templates[t].tail : templates[t].head)
        : after            ? stages[t].post
                           : stages[t].pre);
    IRMapping &map = maps[0][t];
    for (Value v : op.getOperands())
      if (!fetch(t, v, -1, op.getLoc()))
        return failure();
    bool partial = llvm::any_of(op.getOperands(), [&](Value v) {
      return spmd->layoutOf(map.lookup(v))[kDp].isPartial();
    });
    if (partial && !accumulation)
      reduceGradients(t, op.getLoc());
    // A gradient the optimizer reads takes its parameter's placement
    // first (one gather of a gradient computed split for a parameter the
    // plan keeps whole, instead of gathering the parameter and each state
    // updated split).
    if (!accumulation)
      for (Value v : op.getOperands()) {
        auto it = tags.find(v);
        if (it == tags.end() || it->second >= params.size() ||
            latest.lookup(it->second) != v)
          continue;
        Value local = map.lookup(v);
        Layout now = spmd->layoutOf(local), target = gradientTarget(it->second);
        if (now[kDp].isPartial())
          continue;
        target[kDp] = now[kDp];
        if (now != target)
          map.map(v, spmd->reshard(local, target, op.getLoc()));
      }
    if (failed(spmd->rebuild(&op, map)))
      return failure();
  }
  return success();
}

SmallVector<std::tuple<unsigned, unsigned, unsigned>>
StepPartitioner::schedule(unsigned stage) const {
  SmallVector<std::tuple<unsigned, unsigned, unsigned>> order;
  for (PipelinePass pass :
       pipelineOrder(plan.schedule, stages.size(), stage, plan.microBatches,
                     std::max<int64_t>(plan.chunks, 1)))
    order.push_back({pass.microBatch, pass.kind, pass.chunk});
  return order;
}

Block *StepPartitioner::splitWeightGradients(Block *backward) {
  // What the sends to earlier stages need, within the block.
  DenseSet<Operation *> needed;
  SmallVector<Operation *> work;
  for (Operation &op : *backward)
    if (auto send = dyn_cast<shard::SendOp>(op))
      work.push_back(&op);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (op->getBlock() != backward || !needed.insert(op).second)
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        work.push_back(def);
  }
  auto *weights = new Block();
  for (Operation &op : llvm::make_early_inc_range(*backward))
    if (!needed.contains(&op))
      op.moveBefore(weights, weights->end());
  return weights;
}
