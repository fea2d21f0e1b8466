//===- TrainStep.cpp - a planned training step as an SPMD program ---------===//
//
// Part of Ober-Train. Data parallelism with ZeRO 0-3: the batch inputs are
// split over the plan's `dp` devices, the gradient function is inlined and
// rebuilt op by op on local operands (Rules.cpp), and the gradients, which
// come out as partial sums, are reduced once per step, after micro-batch
// accumulation and just before the optimizer first needs them, in buckets
// (last layer first). ZeRO 1/2 reduce-scatter them onto the optimizer
// state's shard and all-gather the updated parameters; ZeRO 3 also keeps
// the parameters sharded, gathering them before the forward and again
// before the backward pass of each micro-batch.
//
//===----------------------------------------------------------------------===//

#include "ober/Partitioning/Partition.h"

#include "Spmd.h"

#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Planning/MemoryModel.h"

#include "mlir/IR/Verifier.h"

#include <functional>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::partition;

namespace {
/// The grid axes: data parallel, then (with tp > 1) tensor parallel.
constexpr unsigned kDp = 0, kTp = 1;

struct PlanFields {
  int64_t tp = 1, pp = 1, dp = 1, zero = 0, microBatches = 1;
  std::string recompute = "none", precision = "f32";
  bool sequenceParallel = false;
};

FailureOr<PlanFields> readPlan(ModuleOp module) {
  auto plan = module->getAttrOfType<DictionaryAttr>("ober.plan");
  if (!plan)
    return module.emitError("ober-partition: the module has no 'ober.plan'; "
                            "plan it first with --ober-plan");
  PlanFields f;
  auto getInt = [&](StringRef name, int64_t &out) -> LogicalResult {
    auto v = plan.getAs<IntegerAttr>(name);
    if (!v)
      return module.emitError("ober-partition: 'ober.plan' has no integer '")
             << name << "'";
    out = v.getInt();
    return success();
  };
  auto getString = [&](StringRef name, std::string &out) -> LogicalResult {
    auto v = plan.getAs<StringAttr>(name);
    if (!v)
      return module.emitError("ober-partition: 'ober.plan' has no string '")
             << name << "'";
    out = v.getValue().str();
    return success();
  };
  if (failed(getInt("tp", f.tp)) || failed(getInt("pp", f.pp)) ||
      failed(getInt("dp", f.dp)) || failed(getInt("zero_stage", f.zero)) ||
      failed(getInt("num_micro_batches", f.microBatches)) ||
      failed(getString("recompute", f.recompute)) ||
      failed(getString("precision", f.precision)))
    return failure();
  if (auto sp = plan.getAs<BoolAttr>("sequence_parallel"))
    f.sequenceParallel = sp.getValue();
  return f;
}

/// What is not partitioned yet, named by its plan field.
LogicalResult checkSupported(ModuleOp module, const PlanFields &f) {
  auto unsupported = [&](StringRef field, StringRef value) {
    return module.emitError("ober-partition: the plan's ")
           << field << " = " << value
           << " is not partitioned yet; supported: data parallelism with "
              "ZeRO 0-3, tensor parallelism and recomputation in f32 (pin it "
              "with --ober-plan=\"... pp=1 sequence-parallel=0 "
              "precision=f32\")";
  };
  if (f.sequenceParallel)
    return unsupported("sequence_parallel", "true");
  if (f.tp < 1)
    return module.emitError("ober-partition: the plan's tp = ")
           << f.tp << " is out of range (tp >= 1)";
  if (f.pp != 1)
    return unsupported("pp", std::to_string(f.pp));
  if (f.precision != "f32")
    return unsupported("precision", f.precision);
  if (f.dp < 1 || f.zero < 0 || f.zero > 3)
    return module.emitError("ober-partition: the plan's dp = ")
           << f.dp << " and zero_stage = " << f.zero
           << " are out of range (dp >= 1, zero_stage 0-3)";
  return success();
}

/// The groups a tensor-parallel split of `arg` along `dim` should have:
/// when the matmul output (and bias sum) it flows into is sliced along the
/// split dimension into equal pieces (a fused QKV projection's query, key
/// and value), each device holds its block of every piece, so the pieces
/// stay split.
int64_t sliceGroups(BlockArgument arg, int64_t dim, int64_t parts) {
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

class StepPartitioner {
public:
  StepPartitioner(ModuleOp module, func::FuncOp step, const PlanFields &plan,
                  const PartitionOptions &options)
      : module(module), step(step), plan(plan), options(options),
        builder(module.getContext()) {}

  LogicalResult run();

private:
  LogicalResult classifyArguments();
  int64_t zeroDim(unsigned param);
  Layout argLayout(unsigned i);
  LogicalResult inlineCall(func::CallOp call, IRMapping &map);
  bool isAccumulation(Operation *op) const;
  void tag(Operation *op);
  void reduceGradients(IRMapping &map, Location loc);
  void reduceBucket(ArrayRef<unsigned> tags, bool scatter, IRMapping &map,
                    Location loc);
  Layout gradientTarget(unsigned t);
  DenseI64ArrayAttr splitAttr(const Layout &layout, int64_t rank);

  ModuleOp module;
  func::FuncOp step;
  PlanFields plan;
  PartitionOptions options;
  OpBuilder builder;
  std::unique_ptr<Spmd> spmd;

  SmallVector<unsigned> params;
  /// Argument -> the parameter (index into `params`) it is state of.
  DenseMap<unsigned, unsigned> stateOf;
  int64_t batchDim = 0;
  DenseSet<unsigned> buffers;
  /// Parameter argument -> the placement tensor parallelism gives it.
  DenseMap<unsigned, Placement> tpSplit;
  /// Serial values that hold a gradient (tag k < params.size()) or the
  /// loss (tag params.size()), and the latest value of each tag.
  DenseMap<Value, unsigned> tags;
  DenseMap<unsigned, Value> latest;
};
} // namespace

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
  for (auto call : step.getBody().getOps<func::CallOp>()) {
    StringRef callee = call.getCallee();
    if (auto grad = module.lookupSymbol<func::FuncOp>(callee))
      for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
        auto arg = dyn_cast<BlockArgument>(operand);
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
    auto lossFn = module.lookupSymbol<func::FuncOp>(
        callee.ends_with("_grad") ? callee.drop_back(5) : callee);
    auto updates = lossFn ? lossFn->getAttrOfType<DenseI64ArrayAttr>(
                                "ober.buffer_updates")
                          : nullptr;
    for (int64_t i : updates ? updates.asArrayRef() : ArrayRef<int64_t>())
      if (i < call.getNumOperands())
        if (auto arg = dyn_cast<BlockArgument>(call.getOperand(i));
            arg && arg.getOwner() == &step.getBody().front())
          buffers.insert(arg.getArgNumber());
  }
  auto attr = step->getAttrOfType<DictionaryAttr>(OberDialect::kTrainStepAttrName);
  int64_t stepMicro = 1;
  if (auto m = attr ? attr.getAs<IntegerAttr>("micro_batches") : nullptr)
    stepMicro = m.getInt();
  if (stepMicro != plan.microBatches)
    return step.emitError("ober-partition: the plan runs ")
           << plan.microBatches << " micro-batch(es) per step on each "
           << "replica but the step was built with " << stepMicro
           << "; rebuild it with --ober-build-train-step=\"micro-batches="
           << plan.microBatches << " ...\" or pin the plan's micro-batch";
  batchDim = stepMicro > 1 ? 1 : 0;
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

/// Accumulating a gradient (or the loss) over micro-batches, or scaling it
/// by a whole factor, as the only use of the gradient: partial sums pass,
/// and the reduction waits for a use that needs the whole gradient.
bool StepPartitioner::isAccumulation(Operation *op) const {
  auto tagged = [&](Value v) { return tags.count(v) > 0 && v.hasOneUse(); };
  if (isa<AddOp, SubOp>(op))
    return tagged(op->getOperand(0)) && tagged(op->getOperand(1)) &&
           tags.lookup(op->getOperand(0)) == tags.lookup(op->getOperand(1));
  if (isa<MulOp, DivOp>(op)) {
    bool lhs = tags.count(op->getOperand(0)), rhs = tags.count(op->getOperand(1));
    return lhs != rhs && tagged(op->getOperand(lhs ? 0 : 1)) &&
           (isa<MulOp>(op) || lhs);
  }
  return false;
}

void StepPartitioner::tag(Operation *op) {
  for (Value v : op->getOperands())
    if (tags.count(v)) {
      unsigned t = tags.lookup(v);
      tags[op->getResult(0)] = t;
      latest[t] = op->getResult(0);
      return;
    }
}

void StepPartitioner::reduceBucket(ArrayRef<unsigned> group, bool scatter,
                                   IRMapping &map, Location loc) {
  int64_t n = plan.dp;
  Layout partial = spmd->replicated();
  partial[kDp] = Placement::partial();
  // The bucket is a device-local buffer: only its data-parallel placement
  // means anything (the collective runs along that axis alone).
  Layout target = spmd->replicated();
  if (scatter)
    target[kDp] = Placement::split(0);
  if (group.size() == 1) {
    Value v = latest.lookup(group.front());
    map.map(v, spmd->reshard(map.lookup(v), gradientTarget(group.front()), loc));
    return;
  }
  SmallVector<Value> pieces;
  SmallVector<int64_t> lengths;
  Type element;
  for (unsigned t : group) {
    // First the gradient's own placement along the other axes (the
    // parameter's tensor-parallel split).
    Value local = map.lookup(latest.lookup(t));
    Layout other = gradientTarget(t);
    other[kDp] = spmd->layoutOf(local)[kDp];
    local = spmd->reshard(local, other, loc);
    auto type = cast<RankedTensorType>(local.getType());
    element = type.getElementType();
    int64_t count = type.getNumElements();
    SmallVector<int64_t> shape =
        scatter ? SmallVector<int64_t>{n, count / n} : SmallVector<int64_t>{count};
    Value flat = local;
    if (type.getShape() != ArrayRef<int64_t>(shape)) {
      flat = ReshapeOp::create(builder, loc,
                               RankedTensorType::get(shape, element), local);
      spmd->setLayout(flat, partial);
    }
    pieces.push_back(flat);
    lengths.push_back(shape.back());
  }
  int64_t total = 0;
  for (int64_t l : lengths)
    total += l;
  SmallVector<int64_t> shape =
      scatter ? SmallVector<int64_t>{n, total} : SmallVector<int64_t>{total};
  Value bucket = ConcatOp::create(builder, loc,
                                  RankedTensorType::get(shape, element), pieces,
                                  builder.getI64IntegerAttr(scatter ? 1 : 0));
  spmd->setLayout(bucket, partial);
  Value reduced = spmd->reshard(bucket, target, loc);
  int64_t offset = 0;
  for (auto [t, length] : llvm::zip(group, lengths)) {
    Value serial = latest.lookup(t);
    auto global = cast<RankedTensorType>(serial.getType());
    int64_t rows = scatter ? 1 : 0;
    SmallVector<int64_t> starts, limits, strides;
    if (scatter) {
      starts = {0, offset};
      limits = {rows, offset + length};
      strides = {1, 1};
    } else {
      starts = {offset};
      limits = {offset + length};
      strides = {1};
    }
    SmallVector<int64_t> pieceShape =
        scatter ? SmallVector<int64_t>{1, length} : SmallVector<int64_t>{length};
    Value piece = SliceOp::create(
        builder, loc, RankedTensorType::get(pieceShape, element), reduced,
        builder.getDenseI64ArrayAttr(starts), builder.getDenseI64ArrayAttr(limits),
        builder.getDenseI64ArrayAttr(strides));
    Layout layout = gradientTarget(t);
    RankedTensorType localType = spmd->localType(global, layout);
    Value back = piece;
    if (localType != piece.getType())
      back = ReshapeOp::create(builder, loc, localType, piece);
    spmd->setLayout(back, layout);
    map.map(serial, back);
    offset += length;
  }
}

void StepPartitioner::reduceGradients(IRMapping &map, Location loc) {
  // Last parameter first: backward produces its gradient first.
  for (bool scatter : {false, true}) {
    SmallVector<unsigned> bucket;
    int64_t bytes = 0;
    for (unsigned t = params.size(); t-- > 0;) {
      Value serial = latest.lookup(t);
      if (!serial)
        continue;
      Value local = map.lookup(serial);
      Placement target = gradientTarget(t)[kDp];
      if (target.isSplit() != scatter)
        continue;
      // Buckets hold whole gradients and shards of dimension 0.
      if (!spmd->layoutOf(local)[kDp].isPartialSum() ||
          (target.isSplit() && target.dim != 0)) {
        map.map(serial, spmd->reshard(local, gradientTarget(t), loc));
        continue;
      }
      bucket.push_back(t);
      auto type = cast<RankedTensorType>(serial.getType());
      bytes += type.getNumElements() *
               std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
      if (bytes >= options.bucketBytes) {
        reduceBucket(bucket, scatter, map, loc);
        bucket.clear();
        bytes = 0;
      }
    }
    if (!bucket.empty())
      reduceBucket(bucket, scatter, map, loc);
  }
  latest.clear();
  tags.clear();
}

LogicalResult StepPartitioner::inlineCall(func::CallOp call, IRMapping &map) {
  auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
  if (!callee || callee.isExternal())
    return call.emitError("ober-partition: cannot inline '")
           << call.getCallee() << "': no body in the module";
  llvm::DenseSet<Operation *> forward = planning::forwardOps(callee);
  Block &body = callee.getBody().front();
  IRMapping inner;
  // ZeRO-3 parameters are gathered before the forward pass, and again
  // before the backward pass (real runs free the first copy).
  DenseMap<Value, Value> gatherAgain;
  for (auto [arg, operand] : llvm::zip(body.getArguments(), call.getOperands())) {
    Value local = map.lookup(operand);
    auto p = dyn_cast<BlockArgument>(operand);
    bool sharded = p && p.getOwner() == &step.getBody().front() &&
                   llvm::is_contained(params, p.getArgNumber()) &&
                   spmd->layoutOf(local)[kDp].isSplit();
    if (sharded) {
      gatherAgain[arg] = local;
      local = spmd->reshard(local, kDp, Placement::rep(), call.getLoc(),
                            /*again=*/true);
    }
    inner.map(arg, local);
  }
  // The backward pass reads a parameter, or a view of it (a transpose,
  // reshape or cast computed in the forward pass), from its second gather;
  // forward ops the plan recomputes (`ober.recompute`) run again, from the
  // values they read, right before the backward pass first needs them, and
  // their forward results are not kept for it.
  bool recompute = llvm::any_of(body.without_terminator(), [](Operation &op) {
    return op.hasAttr("ober.recompute");
  });
  DenseMap<Value, Value> again;
  std::function<Value(Value)> backwardCopy = [&](Value v) -> Value {
    if (auto it = again.find(v); it != again.end())
      return it->second;
    Value copy;
    Operation *def = v.getDefiningOp();
    if (auto it = gatherAgain.find(v); it != gatherAgain.end()) {
      copy = spmd->reshard(it->second, kDp, Placement::rep(), v.getLoc(),
                           /*again=*/true);
    } else if (def && forward.contains(def) &&
               (def->hasAttr("ober.recompute") ||
                (def->getNumOperands() == 1 &&
                 isa<TransposeOp, ReshapeOp, CastOp>(def)))) {
      // Operands: recomputed or gathered again, else the kept values.
      IRMapping operands;
      bool changed = def->hasAttr("ober.recompute");
      for (Value o : def->getOperands()) {
        Value c = backwardCopy(o);
        changed |= static_cast<bool>(c);
        operands.map(o, c ? c : inner.lookup(o));
      }
      if (!changed)
        return Value();
      if (failed(spmd->rebuild(def, operands)))
        return Value();
      for (Value r : def->getResults())
        again[r] = operands.lookup(r);
      return again.lookup(v);
    }
    if (copy)
      again[v] = copy;
    return copy;
  };
  for (Operation &op : body.without_terminator()) {
    if (isa<func::CallOp>(op))
      return op.emitError("ober-partition: calls inside '")
             << callee.getSymName() << "' are not supported";
    // Operands read from the second gather or the recomputation, for this
    // op only.
    SmallVector<std::pair<Value, Value>> restore;
    if ((!gatherAgain.empty() || recompute) && !forward.contains(&op))
      for (Value v : op.getOperands())
        if (Value copy = backwardCopy(v)) {
          restore.push_back({v, inner.lookup(v)});
          inner.map(v, copy);
        }
    if (failed(spmd->rebuild(&op, inner)))
      return failure();
    for (auto [v, original] : restore)
      inner.map(v, original);
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  unsigned numResults = call.getNumResults();
  for (auto [result, value] : llvm::zip(call.getResults(), ret.getOperands()))
    map.map(result, inner.lookup(value));
  // The loss, and the gradients (the last results, one per parameter).
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

LogicalResult StepPartitioner::run() {
  MLIRContext *ctx = module.getContext();
  builder.setInsertionPointToStart(module.getBody());
  std::string gridName = "devices";
  for (int i = 1; module.lookupSymbol(gridName); ++i)
    gridName = "devices_" + std::to_string(i);
  SmallVector<int64_t> shape = {plan.dp};
  if (plan.tp > 1)
    shape.push_back(plan.tp);
  auto grid = shard::GridOp::create(builder, module.getLoc(), gridName, shape);
  spmd = std::make_unique<Spmd>(grid, builder);
  if (plan.tp > 1)
    spmd->setEager(kTp);
  if (failed(classifyArguments()))
    return failure();

  // The local step: same name, arguments and results; local types.
  SmallVector<Type> argTypes;
  SmallVector<Layout> argLayouts;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    argLayouts.push_back(argLayout(i));
    argTypes.push_back(spmd->localType(
        cast<RankedTensorType>(step.getArgumentTypes()[i]), argLayouts.back()));
  }
  builder.setInsertionPoint(step);
  auto local = func::FuncOp::create(builder, step.getLoc(), step.getSymName(),
                                    FunctionType::get(ctx, argTypes, {}));
  local->setAttrs(step->getAttrs());
  local.setFunctionType(FunctionType::get(ctx, argTypes, {}));
  Block *entry = local.addEntryBlock();
  IRMapping map;
  Block &body = step.getBody().front();
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    local.setArgAttrs(i, step.getArgAttrDict(i));
    int64_t rank = cast<RankedTensorType>(argTypes[i]).getRank();
    local.setArgAttr(i, "ober.split", splitAttr(argLayouts[i], rank));
    if (auto groups = groupsAttr(builder, argLayouts[i], rank))
      local.setArgAttr(i, "ober.split_groups", groups);
    spmd->setLayout(entry->getArgument(i), argLayouts[i]);
    map.map(body.getArgument(i), entry->getArgument(i));
  }

  builder.setInsertionPointToStart(entry);
  for (Operation &op : body.without_terminator()) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (failed(inlineCall(call, map)))
        return failure();
      continue;
    }
    bool partialOperand = llvm::any_of(op.getOperands(), [&](Value v) {
      return spmd->layoutOf(map.lookup(v))[kDp].isPartial();
    });
    if (partialOperand && !isAccumulation(&op))
      reduceGradients(map, op.getLoc());
    else if (isAccumulation(&op))
      tag(&op);
    if (failed(spmd->rebuild(&op, map)))
      return failure();
  }

  // Results keep the layout of the argument they replace; the loss whole.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<unsigned> updated(params);
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    if (step.getArgAttr(i, OberDialect::kStateAttrName))
      updated.push_back(i);
  SmallVector<Value> results;
  SmallVector<Layout> resultLayouts;
  for (auto [r, value] : llvm::enumerate(ret.getOperands())) {
    Layout target = r < updated.size() ? argLayouts[updated[r]]
                                       : spmd->replicated();
    results.push_back(spmd->reshard(map.lookup(value), target, ret.getLoc()));
    resultLayouts.push_back(target);
  }
  func::ReturnOp::create(builder, ret.getLoc(), results);
  local.setFunctionType(
      FunctionType::get(ctx, argTypes, ValueRange(results).getTypes()));
  for (unsigned r = 0; r < results.size(); ++r) {
    local.setResultAttrs(r, step.getResultAttrDict(r));
    int64_t rank = cast<RankedTensorType>(results[r].getType()).getRank();
    local.setResultAttr(r, "ober.split", splitAttr(resultLayouts[r], rank));
    if (auto groups = groupsAttr(builder, resultLayouts[r], rank))
      local.setResultAttr(r, "ober.split_groups", groups);
  }
  step.erase();
  if (failed(verify(local)))
    return failure();
  return success();
}

LogicalResult mlir::ober::partitionTrainStep(ModuleOp module, func::FuncOp step,
                                             const PartitionOptions &options) {
  FailureOr<PlanFields> plan = readPlan(module);
  if (failed(plan) || failed(checkSupported(module, *plan)))
    return failure();
  if (step.getNumResults() == 0 || step.isExternal())
    return step.emitError("ober-partition: not a train step");
  return StepPartitioner(module, step, *plan, options).run();
}
