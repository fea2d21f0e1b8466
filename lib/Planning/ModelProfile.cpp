//===- ModelProfile.cpp - segments of a train step and their profiles -----===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/ModelProfile.h"
#include "ober/Planning/MemoryModel.h"

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Dialect/Ober/IR/TensorSizes.h"
#include "ober/Training/TrainStep.h"
#include "ober/Transforms/Passes.h"
#include "mlir/IR/IRMapping.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/IR/TypeUtilities.h"

#include <map>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::planning;

bool mlir::ober::planning::isElementwiseLike(Operation *op) {
  return op->hasTrait<OpTrait::Elementwise>() ||
         isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, RemOp, AndOp,
             OrOp, XorOp, CompareOp, SelectOp, DropoutOp>(op);
}

/// Whether `v` lives only inside a fused chain.
static bool fusedAway(Value v, const DenseSet<Value> &materialized) {
  Operation *def = v.getDefiningOp();
  if (!def || v.use_empty() || materialized.contains(v))
    return false;
  bool epilogue = isa<MatmulOp>(def);
  if (!epilogue && !isElementwiseLike(def))
    return false;
  return llvm::all_of(v.getUsers(), [&](Operation *u) {
    if (isElementwiseLike(u))
      return true;
    return !epilogue &&
           isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, SoftmaxOp,
               LogSoftmaxOp, LayerNormOp, RMSNormOp, CrossEntropyOp>(u);
  });
}

double mlir::ober::planning::loweringWorkspace(Operation *op,
                                              const Cluster &cluster,
                                              StringRef precision) {
  // Attention's scores and probabilities, a block at a time, or a
  // convolution's columns (written and read: half the gather's bytes).
  unsigned width = precisionBytes(precision);
  return std::max(2 * attentionScoreElements(op, cluster.attention) * width,
                  convolutionGatherBytes(op, cluster, width) / 2);
}

SideWork mlir::ober::planning::sideWork(Operation *op, const Cluster &cluster,
                                       StringRef precision) {
  if (double bytes =
          convolutionGatherBytes(op, cluster, precisionBytes(precision)))
    return {memorySeconds(cluster.device, bytes), 1};
  // The fused loops and the flash kernels have no work between their
  // products.
  std::optional<AttentionSizes> sizes = attentionSizes(op);
  const AttentionLowering &lowering = cluster.attention;
  if (!sizes || lowering.holdsNoScores())
    return {};
  // The op alone in a function of its own, lowered as the pipelines do.
  Location loc = op->getLoc();
  OpBuilder b(op->getContext());
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(loc);
  b.setInsertionPointToEnd(scratch->getBody());
  auto fn = func::FuncOp::create(
      b, loc, "attention",
      b.getFunctionType(op->getOperandTypes(), op->getResultTypes()));
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping operands;
  operands.map(op->getOperands(), body->getArguments());
  Operation *copy = b.clone(*op, operands);
  func::ReturnOp::create(b, loc, copy->getResults());
  blockAttention(fn, lowering.blockSize(sizes->lq));
  if (failed(decomposeAttention(fn)))
    return {};
  SideWork side;
  for (Operation &o : body->without_terminator()) {
    if (isa<MatmulOp>(o))
      continue;
    side.seconds += opSeconds(&o, cluster, precision, {});
    side.kernels += endsKernel(&o, {});
  }
  return side;
}

bool mlir::ober::planning::endsKernel(Operation *op,
                                      const DenseSet<Value> &materialized) {
  if (op->getNumResults() == 0 || op->hasTrait<OpTrait::ConstantLike>() ||
      isa<ReshapeOp>(op))
    return false;
  if (isa<TransposeOp>(op) &&
      llvm::all_of(op->getUsers(), [](Operation *u) { return isa<MatmulOp>(u); }))
    return false;
  return llvm::any_of(op->getResults(), [&](Value r) {
    return !fusedAway(r, materialized);
  });
}

double mlir::ober::planning::opSeconds(Operation *op, const Cluster &cluster,
                                       StringRef precision,
                                       const DenseSet<Value> &materialized) {
  if (op->hasTrait<OpTrait::ConstantLike>() || isa<ReshapeOp>(op))
    return 0;
  // A transpose that only feeds matmuls becomes their operand layout.
  if (isa<TransposeOp>(op) && llvm::all_of(op->getUsers(), [](Operation *u) {
        return isa<MatmulOp>(u);
      }))
    return 0;
  unsigned width = precisionBytes(precision);
  OpWork w = workOf(op, width, cluster.attention);
  for (Value v : op->getOperands())
    if (fusedAway(v, materialized))
      w.bytes -= valueBytes(v, width);
  for (Value v : op->getResults())
    if (fusedAway(v, materialized))
      w.bytes -= valueBytes(v, width);
  w.bytes = std::max(w.bytes, 0.0);
  return computeTime(w, precision, cluster);
}

bool ModelProfile::splitsAt(int64_t degree) const {
  if (degree <= 1 || !llvm::is_contained(degrees, degree))
    return true;
  return llvm::any_of(kinds, [&](const SegmentKind &k) {
    const TPProfile &p = k.at(degree);
    return p.parameters.split > 0 || p.forwardMatmul.split > 0 ||
           p.forwardOther.split > 0 || !p.collectives.empty();
  });
}

const TPProfile &SegmentKind::at(int64_t degree) const {
  for (const TPProfile &p : tp)
    if (p.degree == degree)
      return p;
  return tp.front();
}

namespace {
bool isHeavy(Operation *op) {
  return isa<MatmulOp, ConvOp, ConvTransposeOp, AttentionOp, AttentionGradOp,
             EmbeddingOp>(op);
}

/// A structural signature: op names, result types and where each operand
/// comes from (an op earlier in the segment, or outside it with its type).
std::string signatureOf(ArrayRef<Operation *> ops) {
  DenseMap<Operation *, unsigned> index;
  std::string s;
  llvm::raw_string_ostream os(s);
  for (auto [i, op] : llvm::enumerate(ops)) {
    index[op] = i;
    os << op->getName() << "(";
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      auto it = def ? index.find(def) : index.end();
      if (it != index.end())
        os << "%" << it->second << "#" << cast<OpResult>(v).getResultNumber();
      else
        os << "ext:" << v.getType();
      os << ",";
    }
    os << ")->";
    for (Type t : op->getResultTypes())
      os << t << ",";
    os << op->getAttrDictionary() << ";";
  }
  return s;
}

/// Ops between two activation-by-activation matmuls (the core of attention:
/// scores, mask, softmax, dropout): cheap to recompute, large to keep.
DenseSet<Operation *> selectiveOps(ArrayRef<Operation *> ops,
                                   const DenseSet<Value> &activation,
                                   const DenseSet<Value> &params) {
  DenseSet<Operation *> inSegment(ops.begin(), ops.end()), anchors;
  for (Operation *op : ops)
    if (auto m = dyn_cast<MatmulOp>(op))
      if (activation.contains(m.getLhs()) && activation.contains(m.getRhs()) &&
          !params.contains(m.getLhs()) && !params.contains(m.getRhs()))
        anchors.insert(op);
  DenseSet<Operation *> down, up, result;
  SmallVector<Operation *> work(anchors.begin(), anchors.end());
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Operation *u : op->getUsers())
      if (inSegment.contains(u) && down.insert(u).second)
        work.push_back(u);
  }
  work.assign(anchors.begin(), anchors.end());
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Value v : op->getOperands())
      if (Operation *d = v.getDefiningOp();
          d && inSegment.contains(d) && up.insert(d).second)
        work.push_back(d);
  }
  for (Operation *op : ops)
    if (up.contains(op) && (down.contains(op) || anchors.contains(op)))
      result.insert(op);
  return result;
}
} // namespace

/// Whether the backward ops of `model` read a parameter, or make the
/// gradient of one, that its own analysis `own` does not decide.
static bool needsOthersParameters(const Segment &model, const TPProfile &own) {
  if (model.backward.empty())
    return false;
  std::set<std::string> decided;
  for (const auto &split : own.parameterSharding)
    decided.insert(split.name);
  auto undecided = [&](BlockArgument arg) {
    return arg && !decided.count(parameterName(arg).str());
  };
  for (Operation *op : model.backward)
    for (Value v : op->getOperands())
      if (undecided(parameterRoot(v)))
        return true;
  DenseSet<Operation *> mine(model.backward.begin(), model.backward.end());
  auto func = model.backward.front()->getParentOfType<func::FuncOp>();
  return llvm::any_of(parameterGradients(func), [&](auto pair) {
    return mine.contains(pair.second.getDefiningOp()) && undecided(pair.first);
  });
}

/// The first segment of kind `ki` (the one its analyses walk).
static unsigned firstSegmentOf(const ModelProfile &p, unsigned ki) {
  unsigned first = 0;
  while (p.segments[first].kind != ki)
    ++first;
  return first;
}

/// A split for a kind's signature.
static std::string splitName(TPBoundary b) {
  return b.isSplit() ? std::to_string(b.dim) + "/" + std::to_string(b.groups)
                     : "-";
}

namespace {
/// What analysing a segment kind again needs.
struct Analyser {
  ArrayRef<int64_t> degrees;
  const Cluster &cluster;
  StringRef precision;
  double samples;
  const DenseSet<Value> &saved;
  const DenseSet<Operation *> &forward;
  const DenseMap<Value, int64_t> &batchDims;

  /// Kind `ki` at degree index `di`, analysed on its first segment.
  void operator()(ModelProfile &p, unsigned ki, unsigned di,
                  const KnownParameters &known) const {
    unsigned first = firstSegmentOf(p, ki);
    const Segment &model = p.segments[first];
    DenseSet<Operation *> selective(model.selective.begin(),
                                    model.selective.end());
    SegmentKind &k = p.kinds[ki];
    SegmentEnds ends{first ? p.segments[first - 1].boundary : Value(),
                     model.boundary,          k.incoming[di],
                     k.sequenceIncoming[di],  k.gradientIn[di],
                     k.sequenceGradientIn[di]};
    k.tp[di] = analyseTensorParallel(model.ops, model.backward, degrees[di],
                                     cluster, precision, samples, saved,
                                     selective, forward, ends, batchDims,
                                     known);
  }
};
} // namespace

/// Settles what the kinds' analyses need from each other's parameters, per
/// degree. A parameter several kinds read (a tied embedding and head) has
/// one placement: where the kinds split it along different dimensions, or
/// one reads it whole, it stays whole everywhere and the kinds are analysed
/// again with it held whole (which may settle others). Then a kind whose
/// backward ops read a parameter another kind decides, or make its
/// gradient, is analysed again with that placement.
static std::vector<KnownParameters> settleParameters(ModelProfile &p,
                                                     const Analyser &analyse) {
  std::vector<KnownParameters> settled(analyse.degrees.size());
  for (auto [di, d] : llvm::enumerate(analyse.degrees)) {
    if (d == 1)
      continue;
    KnownParameters &known = settled[di];
    while (true) {
      std::map<std::string, std::set<int64_t>> dims; // -1: whole
      for (const SegmentKind &k : p.kinds)
        for (const auto &s : k.tp[di].parameterSharding)
          dims[s.name].insert(s.how == "replicated" ? -1 : s.dim);
      bool held = false;
      for (auto &[name, seen] : dims)
        if (seen.size() > 1 && known.whole.insert(name).second)
          held = true;
      if (!held)
        break;
      // Every kind again, not only the parameter's readers: one whose
      // activation feeds a matmul of it in the next segment depends on it
      // too (sequence parallelism gathers the tokens for a whole weight).
      for (unsigned ki = 0; ki < p.kinds.size(); ++ki)
        analyse(p, ki, di, known);
    }
    known.decided = parameterSplits(p, d);
    for (unsigned ki = 0; ki < p.kinds.size(); ++ki)
      if (needsOthersParameters(p.segments[firstSegmentOf(p, ki)],
                                p.kinds[ki].tp[di]))
        analyse(p, ki, di, known);
  }
  return settled;
}

/// The backward pass hands each segment the gradient of the activation it
/// hands on, split as the next segment's backward pass leaves it (which the
/// forward order of the first analyses could not know). From the last
/// segment to the first, a segment whose kind assumed another split gets
/// the kind with the split it gets (made and analysed when new); kinds left
/// without segments go.
static void settleGradients(ModelProfile &p, const Analyser &analyse,
                            const std::vector<KnownParameters> &known,
                            std::map<std::string, unsigned> kindOf) {
  unsigned n = p.segments.size(), degrees = analyse.degrees.size();
  for (unsigned i = n - 1; i-- > 0;) {
    unsigned old = p.segments[i].kind;
    const SegmentKind &next = p.kinds[p.segments[i + 1].kind];
    const SegmentKind &k = p.kinds[old];
    std::vector<std::optional<TPBoundary>> want(degrees), wantTokens(degrees);
    std::string suffix;
    bool same = true;
    for (unsigned di = 0; di < degrees; ++di) {
      const TPProfile &t = k.tp[di], &after = next.tp[di];
      want[di] = after.gradientOut;
      wantTokens[di] = after.sequenceGradientOut;
      same &= k.gradientIn[di].value_or(t.boundary) == *want[di] &&
              k.sequenceGradientIn[di].value_or(t.sequenceBoundary) ==
                  *wantTokens[di];
      suffix += " g" + std::to_string(analyse.degrees[di]) + ":" +
                splitName(*want[di]) + "," + splitName(*wantTokens[di]);
    }
    if (same)
      continue;
    std::string base = k.signature.substr(0, k.signature.find(" |grad"));
    auto [it, inserted] =
        kindOf.emplace(base + " |grad" + suffix, p.kinds.size());
    unsigned now = it->second;
    if (inserted) {
      SegmentKind copy = k;
      copy.signature = it->first;
      copy.count = 0;
      copy.gradientIn = want;
      copy.sequenceGradientIn = wantTokens;
      p.kinds.push_back(std::move(copy));
    }
    p.kinds[old].count--;
    p.kinds[now].count++;
    p.segments[i].kind = now;
    if (inserted)
      for (unsigned di = 0; di < degrees; ++di)
        analyse(p, now, di, known[di]);
  }
  // Kinds without segments go; the others keep their order.
  std::vector<unsigned> renumber(p.kinds.size());
  std::vector<SegmentKind> kept;
  for (auto [ki, k] : llvm::enumerate(p.kinds)) {
    renumber[ki] = kept.size();
    if (k.count > 0)
      kept.push_back(std::move(k));
  }
  p.kinds = std::move(kept);
  for (Segment &seg : p.segments)
    seg.kind = renumber[seg.kind];
}

FailureOr<ModelProfile>
mlir::ober::planning::profileTrainStep(ModuleOp module, const Cluster &cluster,
                                       StringRef precision,
                                       ArrayRef<int64_t> degrees) {
  if (failed(verifyTensorSizes(module)))
    return failure();
  func::FuncOp step;
  for (auto f : module.getOps<func::FuncOp>())
    if (f->hasAttr("ober.train_step"))
      step = f;
  if (!step)
    return mlir::emitError(module.getLoc(), "the planner needs a training step, but no "
                            "function has `ober.train_step`: run "
                            "--ober-build-train-step first");
  func::CallOp call;
  step.walk([&](func::CallOp c) {
    if (!call)
      call = c;
  });
  auto grad = call ? module.lookupSymbol<func::FuncOp>(call.getCallee())
                   : func::FuncOp();
  if (!grad || grad.isExternal())
    return step.emitError("the training step calls no gradient function "
                          "with a body");
  ModelProfile p;
  p.function = grad.getSymName().str();
  auto train = step->getAttrOfType<DictionaryAttr>("ober.train_step");
  if (auto opt = train.getAs<StringAttr>("optimizer"))
    p.optimizer = opt.str();
  // Static shapes and the batch.
  WalkResult shapes = grad.walk([&](Operation *op) {
    for (Value r : op->getResults())
      if (auto t = dyn_cast<RankedTensorType>(r.getType());
          t && !t.hasStaticShape()) {
        op->emitError("the planner needs static shapes, but this result is ")
            << t << " (" << kOpenDimensionHint << ")";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (shapes.wasInterrupted())
    return failure();
  DenseSet<Value> params, activation;
  for (BlockArgument arg : grad.getArguments()) {
    if (grad.getArgAttr(arg.getArgNumber(), "ober.param")) {
      params.insert(arg);
      if (auto t = dyn_cast<RankedTensorType>(arg.getType()))
        p.irElementType = precisionOf(t);
      continue;
    }
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t || !t.hasStaticShape())
      return grad.emitError("the planner needs static shapes, but argument ")
             << arg.getArgNumber() << " is " << arg.getType();
    activation.insert(arg);
    if (t.getRank() > 0 && p.irBatch == 1)
      p.irBatch = t.getDimSize(0);
  }
  DenseSet<Operation *> forwardSet = forwardOps(grad);
  SmallVector<int64_t> buffers;
  // Buffers are listed on the loss function the gradient function
  // differentiates (the step records it), with the same arguments.
  func::FuncOp lossFn = lossFunctionOf(step);
  if (!lossFn)
    lossFn = grad;
  if (auto attr =
          lossFn->getAttrOfType<DenseI64ArrayAttr>("ober.buffer_updates"))
    buffers.assign(attr.asArrayRef().begin(), attr.asArrayRef().end());
  for (BlockArgument arg : grad.getArguments())
    if (params.contains(arg)) {
      p.parameters += valueElements(arg);
      ModelProfile::ParameterInfo info;
      if (auto name = grad.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                        "ober.param"))
        info.name = name.getValue().str();
      auto t = cast<RankedTensorType>(arg.getType());
      info.shape.assign(t.getShape().begin(), t.getShape().end());
      info.buffer = llvm::is_contained(buffers, arg.getArgNumber());
      // Read by the backward pass, itself or through forward views.
      SmallVector<Value> views = {arg};
      while (!views.empty() && !info.readBackward) {
        Value v = views.pop_back_val();
        for (Operation *u : v.getUsers()) {
          if (isa<func::ReturnOp>(u))
            continue;
          if (!forwardSet.contains(u))
            info.readBackward = true;
          else if (isa<TransposeOp, ReshapeOp, CastOp>(u))
            views.push_back(u->getResult(0));
        }
      }
      p.parameterInfo.push_back(std::move(info));
    }
  double samples = static_cast<double>(p.irBatch);

  // The forward part, in block order.
  Block &body = grad.getBody().front();
  Operation *ret = body.getTerminator();
  DenseSet<Operation *> forward = forwardOps(grad);
  DenseMap<Value, int64_t> batchDims = batchDimensions(grad);
  std::vector<Operation *> order;
  DenseMap<Operation *, unsigned> position;
  for (Operation &op : body)
    if (forward.contains(&op)) {
      position[&op] = order.size();
      order.push_back(&op);
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return activation.contains(v); }))
        for (Value r : op.getResults())
          activation.insert(r);
    }
  if (order.empty())
    return grad.emitError("the loss depends on no operation: nothing to plan");
  if (p.irBatch < 1)
    return grad.emitError("the batch is empty (leading dimension 0)");
  DenseSet<Value> saved;
  for (Operation *op : order)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) {
            return u != ret && !forward.contains(u);
          }))
        saved.insert(r);

  // Cut wherever a single activation is live between forward ops; a piece
  // without heavy work (a residual add, a norm, the loss) joins the piece
  // before it.
  DenseMap<Value, unsigned> lastUse;
  for (Operation *op : order)
    for (Value v : op->getOperands())
      if (activation.contains(v))
        lastUse[v] = position[op];
  std::vector<std::vector<Operation *>> groups;
  std::vector<Value> boundaries;
  std::vector<Operation *> piece;
  // A batch input is live from its first use to its last (an input read
  // by one op, like tokens or labels, never holds a cut open; nor does a
  // scalar, like a dropout seed every layer reads).
  DenseSet<Value> open;
  for (auto [i, op] : llvm::enumerate(order)) {
    piece.push_back(op);
    for (Value r : op->getResults())
      if (lastUse.count(r))
        open.insert(r);
    for (Value v : op->getOperands())
      if (isa<BlockArgument>(v) && lastUse.count(v) && lastUse[v] > i &&
          cast<RankedTensorType>(v.getType()).getRank() > 0)
        open.insert(v);
    for (Value v : op->getOperands())
      if (lastUse.count(v) && lastUse[v] == i)
        open.erase(v);
    bool cut = open.size() == 1 && i + 1 < order.size();
    if (!cut && i + 1 < order.size())
      continue;
    bool heavy = llvm::any_of(piece, isHeavy);
    if (groups.empty() || heavy) {
      groups.push_back(std::move(piece));
      boundaries.push_back(cut ? *open.begin() : Value());
    } else {
      llvm::append_range(groups.back(), piece);
      boundaries.back() = cut ? *open.begin() : Value();
    }
    piece.clear();
  }

  DenseMap<Operation *, unsigned> segmentOf;
  for (auto [i, ops] : llvm::enumerate(groups))
    for (Operation *op : ops)
      segmentOf[op] = i;
  // Backward ops go where the partitioner puts them (placeBackwardOps): the
  // earliest segment among what they read, a forward value counting for
  // the latest segment that reads it. Forward ops that read no activation
  // (views of parameters, constants) run wherever they are needed, and so
  // does a backward op that reads only such values: with its first user.
  DenseMap<Operation *, unsigned> backwardSegment;
  std::vector<std::vector<Operation *>> backwardOf(groups.size());
  {
    DenseMap<Operation *, int> forwardPlace;
    for (Operation *op : order)
      if (llvm::any_of(op->getOperands(),
                       [&](Value v) { return activation.contains(v); }))
        forwardPlace[op] = segmentOf.lookup(op);
    DenseMap<Operation *, int> place =
        placeBackwardOps(grad, forward, forwardPlace);
    for (Operation &op : llvm::reverse(body)) {
      auto it = place.find(&op);
      if (it == place.end() || it->second >= 0)
        continue;
      int s = -1;
      for (Operation *u : op.getUsers())
        if (int at = place.lookup_or(u, -1); at >= 0)
          s = s < 0 ? at : std::min(s, at);
      it->second = s;
    }
    for (Operation &op : body) {
      if (forward.contains(&op) || &op == ret)
        continue;
      int at = place.lookup_or(&op, -1);
      unsigned s = at >= 0 ? at : groups.size() - 1;
      backwardSegment[&op] = s;
      backwardOf[s].push_back(&op);
    }
  }

  // Boundaries a gradient crosses back.
  std::vector<bool> gradientBack(groups.size(), false);
  for (auto &[op, s] : backwardSegment)
    for (Value v : op->getOperands())
      if (auto from = backwardSegment.find(v.getDefiningOp());
          from != backwardSegment.end())
        for (unsigned b = s; b < from->second; ++b)
          gradientBack[b] = true;

  // Distinct kinds, each profiled once.
  std::map<std::string, unsigned> kindOf;
  Analyser analyse{degrees, cluster, precision, samples,
                   saved,   forward, batchDims};
  for (auto [i, ops] : llvm::enumerate(groups)) {
    Segment seg;
    seg.ops = ops;
    seg.backward = backwardOf[i];
    seg.boundaryElements =
        boundaries[i] ? valueElements(boundaries[i]) / samples : 0;
    seg.boundary = boundaries[i];
    seg.gradientBack = gradientBack[i];
    // How the previous segment hands over its activation, per degree: part
    // of what makes this segment a kind.
    std::vector<TPBoundary> incoming(degrees.size()),
        incomingTokens(degrees.size());
    std::string split;
    if (i > 0)
      for (auto [di, d] : llvm::enumerate(degrees)) {
        const TPProfile &before = p.kinds[p.segments[i - 1].kind].tp[di];
        incoming[di] = before.boundary;
        incomingTokens[di] = before.sequenceBoundary;
        if (incoming[di].isSplit() || incomingTokens[di].isSplit())
          split += " t" + std::to_string(d) + ":" + splitName(incoming[di]) +
                   "," + splitName(incomingTokens[di]);
      }
    DenseSet<Operation *> selective = selectiveOps(ops, activation, params);
    for (Operation *op : ops)
      if (selective.contains(op))
        seg.selective.push_back(op);
    // Its backward ops too: the first layer of a stack also makes the
    // gradients of what feeds it (a position embedding's). (Not the views
    // of gradients, which run with their users: each layer of a stack
    // takes one from the next.)
    std::vector<Operation *> work;
    for (Operation *op : backwardOf[i])
      if (op->getNumOperands() != 1 || !isa<ReshapeOp, TransposeOp>(op))
        work.push_back(op);
    std::string sig = signatureOf(ops) + " | " + signatureOf(work) + split;
    auto [it, inserted] = kindOf.emplace(sig, p.kinds.size());
    if (inserted) {
      SegmentKind k;
      k.signature = sig;
      // Named by the parameters it reads (through views), first to last.
      std::vector<std::string> names;
      for (Operation *op : ops)
        for (Value operand : op->getOperands()) {
          Value v = viewRoot(operand);
          if (params.contains(v))
            names.push_back(grad.getArgAttrOfType<StringAttr>(
                                    cast<BlockArgument>(v).getArgNumber(),
                                    "ober.param")
                                .str());
        }
      k.name = names.empty() ? ops.front()->getName().getStringRef().str()
               : names.size() == 1 || names.front() == names.back()
                   ? names.front()
                   : names.front() + ".." + names.back();
      for (Operation *op : ops) {
        for (Value r : op->getResults())
          if (isa<FloatType>(getElementTypeOrSelf(r.getType())))
            k.largestValue = std::max(k.largestValue, valueElements(r) / samples *
                                                          precisionBytes(precision));
        k.loweringWorkspace =
            std::max(k.loweringWorkspace,
                     loweringWorkspace(op, cluster, precision) / samples);
      }
      k.incoming = incoming;
      k.sequenceIncoming = incomingTokens;
      k.gradientIn.resize(degrees.size());
      k.sequenceGradientIn.resize(degrees.size());
      k.tp.resize(degrees.size());
      for (Operation *op : ops)
        if (OpWork w = workOf(op); w.matmul)
          k.forwardFlops += w.flops / samples;
      p.kinds.push_back(std::move(k));
    }
    seg.kind = it->second;
    p.kinds[seg.kind].count++;
    p.segments.push_back(std::move(seg));
    if (inserted)
      for (unsigned di = 0; di < degrees.size(); ++di)
        analyse(p, it->second, di, {});
  }
  std::vector<KnownParameters> known = settleParameters(p, analyse);
  settleGradients(p, analyse, known, kindOf);

  std::vector<double> bwdMatmul(p.segments.size()), bwdOther(p.segments.size()),
      bwdFlops(p.segments.size()), bwdKernels(p.segments.size());
  for (Operation &op : body) {
    OpWork w = workOf(&op, 0, cluster.attention);
    if (w.matmul) {
      p.trainFlops += (w.flops - w.repeated) / samples;
      p.repeatedFlops += w.repeated / samples;
    }
    if (forward.contains(&op) || &op == ret)
      continue;
    unsigned seg = backwardSegment.lookup(&op);
    double seconds = opSeconds(&op, cluster, precision, saved) / samples;
    (w.onMatrixUnits() ? bwdMatmul : bwdOther)[seg] += seconds;
    bwdKernels[seg] += endsKernel(&op, saved);
    SideWork side = sideWork(&op, cluster, precision);
    bwdOther[seg] += side.seconds / samples;
    bwdKernels[seg] += side.kernels;
    if (w.matmul)
      bwdFlops[seg] += w.flops / samples;
  }
  for (auto [i, seg] : llvm::enumerate(p.segments)) {
    SegmentKind &k = p.kinds[seg.kind];
    k.backwardMatmul += bwdMatmul[i] / k.count;
    k.backwardOther += bwdOther[i] / k.count;
    k.backwardKernels += bwdKernels[i] / k.count;
    k.trainFlops += bwdFlops[i] / k.count;
  }
  for (SegmentKind &k : p.kinds)
    k.trainFlops += k.forwardFlops;
  // Parameters read by several segments (tied embeddings) are held once
  // by a device that holds all of those segments.
  // (A view of a parameter counts where it is read.)
  for (Value v : params) {
    unsigned first = p.segments.size(), last = 0;
    SmallVector<Value> views = {v};
    while (!views.empty())
      for (Operation *u : views.pop_back_val().getUsers()) {
        if (u->getNumOperands() == 1 && isa<ReshapeOp, TransposeOp, CastOp>(u)) {
          views.push_back(u->getResult(0));
          continue;
        }
        if (auto it = segmentOf.find(u); it != segmentOf.end()) {
          first = std::min(first, it->second);
          last = std::max(last, it->second);
        }
      }
    if (first < last)
      p.shared.push_back(
          {grad.getArgAttrOfType<StringAttr>(cast<BlockArgument>(v).getArgNumber(),
                                             "ober.param")
               .str(),
           first, last, valueElements(v)});
  }
  p.degrees.assign(degrees.begin(), degrees.end());
  p.floatBytes = precisionBytes(precision);
  // The working set at the peak, from liveness at IR widths, rescaled to
  // the precision.
  FailureOr<int64_t> peak = peakLiveBytes(grad, /*countResults=*/false);
  FailureOr<int64_t> withGradients = peakLiveBytes(grad);
  if (failed(peak) || failed(withGradients))
    return failure();
  double args = 0;
  for (BlockArgument a : grad.getArguments()) {
    args += valueBytes(a);
    if (!params.contains(a))
      p.inputBytes += valueBytes(a, p.floatBytes) / samples;
  }
  double irWidth = p.irElementType.empty() ? p.floatBytes
                                           : precisionBytes(p.irElementType);
  p.activationPeak =
      std::max(0.0, (*peak - args) / samples * p.floatBytes / irWidth);
  p.gradientsAtPeak =
      std::max<double>(0, *withGradients - *peak) * p.floatBytes / irWidth;
  for (const Segment &seg : p.segments)
    p.savedTotal += p.kinds[seg.kind].at(degrees.front()).saved.total();
  return p;
}


llvm::StringSet<> mlir::ober::planning::parametersOf(const Segment &segment) {
  llvm::StringSet<> names;
  for (Operation *op : segment.ops)
    for (Value v : op->getOperands())
      if (BlockArgument arg = parameterRoot(v))
        names.insert(parameterName(arg));
  return names;
}

std::map<std::string, TPProfile::ParameterSplit>
mlir::ober::planning::segmentSplits(const ModelProfile &m, unsigned segment,
                                    int64_t degree) {
  std::map<std::string, TPProfile::ParameterSplit> out;
  const Segment &seg = m.segments[segment];
  const Segment *model = nullptr;
  for (const Segment &other : m.segments)
    if (other.kind == seg.kind) {
      model = &other;
      break;
    }
  std::map<std::string, TPProfile::ParameterSplit> decision;
  for (const auto &split : m.kinds[seg.kind].at(degree).parameterSharding)
    decision[split.name] = split;
  for (auto [op, mop] : llvm::zip(seg.ops, model->ops))
    for (auto [v, mv] : llvm::zip(op->getOperands(), mop->getOperands())) {
      BlockArgument arg = parameterRoot(v), marg = parameterRoot(mv);
      if (!arg || !marg)
        continue;
      std::string name = parameterName(arg).str();
      if (out.count(name))
        continue;
      // A segment that only makes a view of it (a transpose read by a
      // later segment) does not decide.
      auto it = decision.find(parameterName(marg).str());
      if (it == decision.end())
        continue;
      TPProfile::ParameterSplit split{name, "replicated", -1};
      if (it->second.how != "replicated") {
        split.how = it->second.how;
        split.dim = it->second.dim;
      }
      out[name] = split;
    }
  return out;
}

std::map<std::string, TPProfile::ParameterSplit>
mlir::ober::planning::parameterSplits(const ModelProfile &m, int64_t degree) {
  std::map<std::string, TPProfile::ParameterSplit> out;
  for (unsigned i = 0; i < m.segments.size(); ++i)
    for (auto &[name, split] : segmentSplits(m, i, degree))
      out.try_emplace(name, split);
  return out;
}
