//===- TrainStep.cpp - a planned training step as per-device programs ----===//
//
// Part of Ober-Train. Reads the plan, builds the step again when the plan's
// global batch or micro-batches differ from its own, places every argument
// of the step on the device grid (batch inputs split over the data-parallel
// devices, other inputs whole; parameters and their optimizer state split
// as tensor parallelism says, and over the data-parallel devices for ZeRO),
// and drives the rest: each op of the step and of its inlined gradient
// function is rebuilt on local operands by its rule (ShardingDecisions.cpp), in the
// pipeline stage it belongs to (Stages.cpp), and gradients are reduced
// where the optimizer first needs them (Gradients.cpp).
//
//===----------------------------------------------------------------------===//

#include "StepPartitioner.h"

#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Training/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::partition;

FailureOr<PlanFields> mlir::ober::partition::readPlan(ModuleOp module) {
  Attribute attr = module->getAttr("ober.plan");
  if (!attr)
    return module.emitError("ober-partition: the module has no 'ober.plan'; "
                            "plan it first with --ober-plan");
  // The dialect verifies the attribute's kind and its fields.
  auto plan = cast<PlanAttr>(attr);
  PlanFields f;
  f.tp = plan.getTp();
  f.pp = plan.getPp();
  f.dp = plan.getDp();
  f.zero = plan.getZeroStage();
  f.microBatches = plan.getNumMicroBatches();
  f.globalBatch = plan.getGlobalBatch();
  f.chunks = plan.getChunks();
  f.recompute = plan.getRecompute();
  f.precision = plan.getPrecision();
  f.schedule = plan.getSchedule();
  f.sequenceParallel = plan.getSequenceParallel();
  f.localSteps = plan.getLocalSteps();
  return f;
}

LogicalResult StepPartitioner::classifyArguments() {
  llvm::StringMap<unsigned> byName;
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    if (auto name = step.getArgAttrOfType<StringAttr>(
            i, OberDialect::kParamAttrName)) {
      byName[name.getValue()] = params.size();
      params.push_back(i);
    }
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    auto name = step.getArgAttrOfType<StringAttr>(i, OberDialect::kStateAttrName);
    if (!name)
      continue;
    auto [owner, slot] = name.getValue().rsplit('.');
    auto it = byName.find(owner);
    if (!slot.empty() && it != byName.end() &&
        step.getArgumentTypes()[i] == step.getArgumentTypes()[params[it->second]])
      stateOf[i] = it->second;
  }
  // Buffers (batch-norm running statistics): the loss function lists the
  // arguments it updates; ZeRO keeps them whole. The planner's tensor
  // parallel splits sit on the gradient function's parameters.
  func::FuncOp lossFn = lossFunctionOf(step);
  auto updates = lossFn ? lossFn->getAttrOfType<DenseI64ArrayAttr>(
                              "ober.buffer_updates")
                        : nullptr;
  SmallVector<func::CallOp> stepCalls;
  step.walk([&](func::CallOp call) { stepCalls.push_back(call); });
  for (func::CallOp call : stepCalls) {
    StringRef callee = call.getCallee();
    if (auto grad = module.lookupSymbol<func::FuncOp>(callee))
      for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
        auto arg = dyn_cast<BlockArgument>(initialValueOf(operand));
        auto dim = i < grad.getNumArguments()
                       ? grad.getArgAttrOfType<IntegerAttr>(i, "ober.tp_dim")
                       : nullptr;
        auto type = cast<RankedTensorType>(operand.getType());
        if (plan.tp > 1 && arg && dim &&
            arg.getOwner() == &step.getBody().front() &&
            type.getDimSize(dim.getInt()) % plan.tp == 0)
          tpSplit[arg.getArgNumber()] = Placement::split(
              dim.getInt(),
              sliceGroups(grad.getArgument(i), dim.getInt(), plan.tp));
      }
    for (int64_t i : updates ? updates.asArrayRef() : ArrayRef<int64_t>())
      if (i < call.getNumOperands())
        if (auto arg = dyn_cast<BlockArgument>(initialValueOf(call.getOperand(i)));
            arg && arg.getOwner() == &step.getBody().front())
          buffers.insert(arg.getArgNumber());
  }
  // The step runs the plan's micro-batches (stepForPlanBatch); with more
  // than one, samples follow the micro-batch dimension.
  batchDim = plan.microBatches > 1 ? 1 : 0;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    auto name = step.getArgAttrOfType<StringAttr>(i, OberDialect::kBatchAttrName);
    if (!name)
      continue;
    auto type = cast<RankedTensorType>(step.getArgumentTypes()[i]);
    if (type.getRank() <= batchDim || ShapedType::isDynamic(type.getDimSize(batchDim)) ||
        type.getDimSize(batchDim) % plan.dp != 0)
      return step.emitError("ober-partition: batch input '")
             << name.getValue() << "' (" << type << ") has no dimension "
             << batchDim << " that the " << plan.dp
             << " data-parallel devices divide";
  }
  return success();
}

int64_t StepPartitioner::zeroDim(unsigned param) {
  if (buffers.contains(params[param]))
    return -1;
  auto type = cast<RankedTensorType>(step.getArgumentTypes()[params[param]]);
  auto it = tpSplit.find(params[param]);
  int64_t tp = it != tpSplit.end() ? it->second.dim : -1;
  for (int64_t d = 0; d < type.getRank() && plan.dp > 1; ++d)
    if (d != tp && type.getDimSize(d) >= plan.dp &&
        type.getDimSize(d) % plan.dp == 0)
      return d;
  return -1;
}

Layout StepPartitioner::argLayout(unsigned i) {
  Layout layout = spmd->replicated();
  if (step.getArgAttr(i, OberDialect::kBatchAttrName)) {
    if (plan.dp > 1)
      layout[kDp] = Placement::split(batchDim);
  } else if (auto it = llvm::find(params, i); it != params.end()) {
    int64_t d = zeroDim(it - params.begin());
    if (plan.zero >= 3 && d >= 0)
      layout[kDp] = Placement::split(d);
    if (auto t = tpSplit.find(i); t != tpSplit.end())
      layout[kTp] = t->second;
  } else if (auto s = stateOf.find(i); s != stateOf.end()) {
    int64_t d = zeroDim(s->second);
    if (plan.zero >= 1 && d >= 0)
      layout[kDp] = Placement::split(d);
    if (auto t = tpSplit.find(params[s->second]); t != tpSplit.end())
      layout[kTp] = t->second;
  }
  return layout;
}

Layout StepPartitioner::gradientTarget(unsigned t) {
  Layout layout = t < params.size() ? argLayout(params[t]) : spmd->replicated();
  int64_t d = t < params.size() ? zeroDim(t) : -1;
  layout[kDp] = plan.zero >= 1 && d >= 0 ? Placement::split(d) : Placement::rep();
  return layout;
}

DenseI64ArrayAttr StepPartitioner::splitAttr(const Layout &layout,
                                             int64_t rank) {
  SmallVector<int64_t> split(rank, -1);
  for (auto [axis, p] : llvm::enumerate(layout))
    if (p.isSplit())
      split[p.dim] = axis;
  return builder.getDenseI64ArrayAttr(split);
}

/// `ober.split_groups` where a dimension is split in groups (else null).
static DenseI64ArrayAttr groupsAttr(Builder &b, const Layout &layout,
                                    int64_t rank) {
  SmallVector<int64_t> groups(rank, 1);
  bool any = false;
  for (Placement p : layout)
    if (p.isGrouped()) {
      groups[p.dim] = p.groups;
      any = true;
    }
  return any ? b.getDenseI64ArrayAttr(groups) : DenseI64ArrayAttr();
}


LogicalResult StepPartitioner::run() {
  MLIRContext *ctx = module.getContext();
  if (failed(classifyArguments()))
    return failure();
  builder.setInsertionPointToStart(module.getBody());
  std::string gridName = "devices";
  for (int i = 1; module.lookupSymbol(gridName); ++i)
    gridName = "devices_" + std::to_string(i);
  SmallVector<int64_t> shape = {plan.dp, plan.tp};
  if (plan.pp > 1)
    shape.push_back(plan.pp);
  auto grid = shard::GridOp::create(builder, module.getLoc(), gridName, shape);
  spmd = std::make_unique<Spmd>(grid, builder);
  if (plan.precision == Precision::BF16)
    compute = builder.getBF16Type();
  else if (plan.precision == Precision::F16)
    compute = builder.getF16Type();
  if (plan.tp > 1)
    spmd->setEager(kTp);
  if (plan.localSteps > 1)
    spmd->setLocalAxis(kDp);
  if (plan.tp > 1 && plan.sequenceParallel)
    spmd->setSequenceParallel(kTp);
  if (failed(assignStages()))
    return failure();

  // One program per stage, each with the step's arguments and results in
  // local types; `ober.split` says how the global tensors are cut.
  Block &body = step.getBody().front();
  SmallVector<Type> argTypes;
  SmallVector<Layout> argLayouts;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    argLayouts.push_back(argLayout(i));
    argTypes.push_back(spmd->localType(
        cast<RankedTensorType>(step.getArgumentTypes()[i]), argLayouts.back()));
  }
  maps.assign(calls.size() + 1, std::vector<IRMapping>(plan.pp));
  builder.setInsertionPoint(step);
  for (int64_t s = 0; s < plan.pp; ++s) {
    std::string name = step.getSymName().str();
    if (s > 0)
      name += ".stage" + std::to_string(s);
    Stage stage;
    stage.func = func::FuncOp::create(builder, step.getLoc(), name,
                                      FunctionType::get(ctx, argTypes, {}));
    if (s == 0)
      stage.func->setAttrs(step->getAttrs());
    else
      stage.func.setPrivate();
    stage.func.setFunctionType(FunctionType::get(ctx, argTypes, {}));
    stage.entry = stage.func.addEntryBlock();
    stage.pre = new Block();
    stage.post = new Block();
    for (unsigned i = 0; i < step.getNumArguments(); ++i) {
      stage.func.setArgAttrs(i, step.getArgAttrDict(i));
      int64_t rank = cast<RankedTensorType>(argTypes[i]).getRank();
      stage.func.setArgAttr(i, "ober.split", splitAttr(argLayouts[i], rank));
      if (auto groups = groupsAttr(builder, argLayouts[i], rank))
        stage.func.setArgAttr(i, "ober.split_groups", groups);
      spmd->setLayout(stage.entry->getArgument(i), argLayouts[i]);
      maps[0][s].map(body.getArgument(i), stage.entry->getArgument(i));
    }
    stages.push_back(stage);
  }

  unsigned micro = 0;
  for (Operation &op : body.without_terminator()) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (failed(inlineCall(call, micro++)))
        return failure();
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (loop != microBatchLoopOf(step))
        return loop.emitError("ober-partition: the step's only loop must be "
                              "its micro-batch loop, with constant bounds "
                              "and a positive step");
      if (failed(buildLoop(loop)))
        return failure();
      continue;
    }
    // The loop's bounds: it builds its own.
    if (isa<arith::ConstantIndexOp>(op))
      continue;
    if (failed(buildStepOp(op)))
      return failure();
  }
  return finish(argLayouts);
}

/// Erases ops whose results nobody reads (an op built for every stage that
/// only some use); sends stay.
static void eraseUnused(func::FuncOp func) {
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<Operation *> dead;
    func.walk([&](Operation *op) {
      if (op->getNumResults() > 0 && op->use_empty() &&
          !isa<shard::SendOp>(op) &&
          isa<OberDialect, shard::ShardDialect>(op->getDialect()))
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
    changed = !dead.empty();
  }
}

LogicalResult StepPartitioner::finish(ArrayRef<Layout> argLayouts) {
  MLIRContext *ctx = module.getContext();
  Block &body = step.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  // Results replace parameters, then state, then the loss.
  SmallVector<unsigned> updated(params);
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    if (step.getArgAttr(i, OberDialect::kStateAttrName))
      updated.push_back(i);
  SmallVector<Layout> targets;
  SmallVector<int> owners;
  for (auto [r, value] : llvm::enumerate(ret.getOperands())) {
    targets.push_back(r < updated.size() ? argLayouts[updated[r]]
                                         : spmd->replicated());
    int owner = stageOf(value);
    owners.push_back(owner < 0 ? 0 : owner);
  }
  SmallVector<Attribute> names;
  for (unsigned t = 0; t < stages.size(); ++t) {
    Stage &stage = stages[t];
    builder.setInsertionPointToEnd(stage.post);
    SmallVector<Value> results;
    for (auto [r, value] : llvm::enumerate(ret.getOperands())) {
      if (owners[r] == static_cast<int>(t) || stageOf(value) < 0) {
        Value local = fetch(t, value, -1, ret.getLoc());
        if (!local)
          return failure();
        results.push_back(spmd->reshard(local, targets[r], ret.getLoc()));
      } else if (r < updated.size()) {
        // Another stage's parameter or state: unchanged here.
        results.push_back(stage.entry->getArgument(updated[r]));
      } else {
        auto type = spmd->localType(
            cast<RankedTensorType>(value.getType()), targets[r]);
        results.push_back(ConstantOp::create(
            builder, ret.getLoc(),
            cast<DenseElementsAttr>(builder.getZeroAttr(type))));
      }
    }
    func::ReturnOp::create(builder, ret.getLoc(), results);
    // The stage's program in schedule order.
    auto splice = [&](Block *b) {
      stage.entry->getOperations().splice(stage.entry->end(),
                                          b->getOperations());
      delete b;
    };
    splice(stage.pre);
    std::map<unsigned, Block *> weights;
    if (plan.schedule == Schedule::ZeroBubble)
      for (auto &[key, block] : stage.phases)
        if (std::get<1>(key))
          weights[std::get<0>(key)] = splitWeightGradients(block);
    for (auto [micro, kind, chunk] : schedule(t)) {
      if (kind == 2) {
        if (Block *w = weights[micro])
          splice(w);
        continue;
      }
      if (auto it = stage.phases.find({micro, kind == 1, chunk});
          it != stage.phases.end()) {
        splice(it->second);
        stage.phases.erase(it);
      }
    }
    // Passes the schedule left out (none, by construction): keep them.
    for (auto &[key, block] : stage.phases)
      splice(block);
    splice(stage.post);
    func::FuncOp func = stage.func;
    func.setFunctionType(FunctionType::get(
        ctx, func.getArgumentTypes(), ValueRange(results).getTypes()));
    for (unsigned r = 0; r < results.size(); ++r) {
      func.setResultAttrs(r, step.getResultAttrDict(r));
      int64_t rank = cast<RankedTensorType>(results[r].getType()).getRank();
      func.setResultAttr(r, "ober.split", splitAttr(targets[r], rank));
      if (auto groups = groupsAttr(builder, targets[r], rank))
        func.setResultAttr(r, "ober.split_groups", groups);
      if (stages.size() > 1)
        func.setResultAttr(r, "ober.stage",
                           builder.getI64IntegerAttr(owners[r]));
    }
    eraseUnused(func);
    names.push_back(FlatSymbolRefAttr::get(func.getSymNameAttr()));
  }
  if (plan.localSteps > 1) {
    stages.front().func->setAttr("ober.local_steps",
                                 builder.getI64IntegerAttr(plan.localSteps));
    stages.front().func->setAttr("ober.replica_axis",
                                 builder.getI64IntegerAttr(kDp));
  }
  if (stages.size() > 1) {
    stages.front().func->setAttr("ober.stage_functions",
                                 builder.getArrayAttr(names));
    stages.front().func->setAttr("ober.pipeline_axis",
                                 builder.getI64IntegerAttr(kPp));
  }
  step.erase();
  for (Stage &stage : stages)
    if (failed(verify(stage.func)))
      return failure();
  return success();
}

/// The samples the step's batch inputs hold per step (all its micro-batches),
/// or nullopt when it has none.
static std::optional<int64_t> samplesPerStep(func::FuncOp step) {
  int64_t micro = microBatchesOf(step);
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    if (!step.getArgAttr(i, OberDialect::kBatchAttrName))
      continue;
    auto type = cast<RankedTensorType>(step.getArgumentTypes()[i]);
    if (type.getRank() < (micro > 1 ? 2 : 1) || !type.hasStaticShape())
      return std::nullopt;
    return micro > 1 ? type.getDimSize(0) * type.getDimSize(1)
                     : type.getDimSize(0);
  }
  return std::nullopt;
}

/// `step`, or the step built again for the plan's batch: its micro-batches,
/// of the global batch's share each (the data-parallel replicas then split
/// every micro-batch).
static FailureOr<func::FuncOp>
stepForPlanBatch(ModuleOp module, func::FuncOp step, const PlanFields &plan) {
  if (microBatchesOf(step) == plan.microBatches &&
      samplesPerStep(step) == plan.globalBatch)
    return step;
  FailureOr<StepBatch> built = stepBatchOf(step);
  if (failed(built))
    return failure();
  // The plan's verifier makes the global batch a whole number of
  // micro-batches.
  int64_t samples = plan.globalBatch;
  StepBatch want{samples / plan.microBatches, plan.microBatches};
  if (want == *built)
    return step;
  std::string purpose;
  llvm::raw_string_ostream(purpose)
      << "ober-partition: the plan trains a global batch of " << samples
      << " samples in " << want.microBatches << " micro-batch(es) of "
      << want.microBatch << ", the step " << built->samples() << " in "
      << built->microBatches;
  return respecializeTrainStep(step, want, purpose);
}

LogicalResult mlir::ober::partitionTrainStep(ModuleOp module, func::FuncOp step,
                                             const PartitionOptions &options) {
  FailureOr<PlanFields> plan = readPlan(module);
  if (failed(plan))
    return failure();
  if (step.getNumResults() == 0 || step.isExternal())
    return step.emitError("ober-partition: not a train step");
  // f16's range needs the loss scaled (bf16 has f32's range).
  auto built = step->getAttrOfType<DictionaryAttr>("ober.train_step");
  auto scaling = built ? built.getAs<StringAttr>("loss_scale") : nullptr;
  if (plan->precision == Precision::F16 && (!scaling || scaling.getValue() != "dynamic"))
    return step.emitError("ober-partition: the plan's precision = f16 needs "
                          "a step built with dynamic loss scaling "
                          "(--ober-build-train-step=\"loss-scale=dynamic ...\")");
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    if (step.getArgAttr(i, "ober.split"))
      return step.emitError("ober-partition: the step is already "
                            "partitioned (its arguments carry 'ober.split')");
  FailureOr<func::FuncOp> planned = stepForPlanBatch(module, step, *plan);
  if (failed(planned))
    return failure();
  return StepPartitioner(module, *planned, *plan, options).run();
}
