//===- TensorParallel.cpp - what tensor parallelism does to a segment -----===//
//
// Part of Ober-Train. A walk over one segment's forward and backward ops for
// a tensor-parallel degree t that places each op as the partitioner does:
// by `decide` (ShardingDecisions.h, read from the sharding rule table),
// completing partial sums right after the op that makes them (Megatron's
// tensor-parallel regions) and moving an operand to the placement the
// decision asks for with the collective the partitioner uses (an
// all-gather, an all-to-all; a whole operand is sliced locally). The
// planner's own part is what the partitioner is given: where each
// parameter splits (Megatron-LM's column- and row-parallel matmuls, a
// vocabulary-parallel table, a split that follows the activation). A second
// walk with those parameters places the ops under sequence parallelism
// with the partitioner's two policies on top of the rules (completions of
// activations scatter their tokens, matmuls gather them: Spmd.cpp). The
// result is what the planner needs: which work and activations divide by
// t, which parameters shard, and which collectives the split costs, with
// and without sequence parallelism.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/ModelProfile.h"

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Dialect/Ober/IR/ShardingDecisions.h"
#include "ober/Dialect/Ober/IR/ShardingRules.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>
#include <set>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::planning;

namespace {
ArrayRef<int64_t> shapeOf(Value v) {
  if (auto r = dyn_cast<RankedTensorType>(v.getType()))
    return r.getShape();
  return {};
}

int64_t rankOf(Value v) { return static_cast<int64_t>(shapeOf(v).size()); }

std::string describe(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getName();
  if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
    os << " at " << loc.getFilename() << ":" << loc.getLine();
  return s;
}

/// Values the distributed form of `op` all-reduces when its operand
/// `operand` is split on dimension `dim`, by the op's sharding rule: the
/// split factor's statistics for each slice (the operand's elements over
/// the sizes of every statistics factor it holds); 0 when that dimension is
/// no statistics factor.
double statisticsElements(Operation *op, unsigned operand, int64_t dim) {
  std::optional<ShardingRule> rule = getShardingRule(op);
  if (!rule || dim < 0 || dim >= rankOf(op->getOperand(operand)))
    return 0;
  const TensorMapping &tensor = rule->operands[operand];
  if (tensor[dim].empty() ||
      rule->factors[tensor[dim].front()].kind != FactorKind::Statistics)
    return 0;
  double slices = valueElements(op->getOperand(operand));
  for (const DimMapping &d : tensor)
    for (unsigned f : d)
      if (rule->factors[f].kind == FactorKind::Statistics)
        slices /= rule->factors[f].size;
  return rule->factors[tensor[dim].front()].statistics * slices;
}

struct Analysis {
  Analysis(int64_t t, const Cluster &cluster, StringRef precision,
           double samples, const KnownParameters &known)
      : t(t), cluster(cluster), precision(precision), samples(samples),
        whole(known.whole), elsewhere(known.decided) {}
  int64_t t;
  const Cluster &cluster;
  StringRef precision;
  double samples;
  /// Parameters that stay whole (tied ones the segments disagree on).
  const std::set<std::string> &whole;
  /// Each parameter's split as the segment that decides it chose (for the
  /// backward ops of this one that read it or make its gradient).
  const std::map<std::string, TPProfile::ParameterSplit> &elsewhere;
  TPProfile out;
  /// Each value's placement along the tensor-parallel axis (whole when
  /// absent).
  DenseMap<Value, Placement> state;
  /// Moves already made (the partitioner reuses a moved value): value and
  /// the placement it went to.
  std::set<std::tuple<void *, int, int64_t, int64_t>> moved;
  /// Parameter values (and reshapes/transposes/casts of them) with the
  /// parameter's name: their sharding is free to choose.
  DenseMap<Value, std::string> paramOf;
  std::map<std::string, std::string> decision;
  std::map<std::string, int64_t> decisionDim;
  /// Values that depend on the batch.
  DenseSet<Value> activation;
  /// The pass being walked.
  TPCollective::Pass pass = TPCollective::Pass::Forward;
  /// Whether `v`'s size scales with the samples (it has a batch
  /// dimension; a loss or a parameter's gradient moves once per
  /// micro-batch whatever its size).
  bool perSample(Value v) const { return batchDims->count(v); }
  const DenseMap<Value, int64_t> *batchDims = nullptr;
  /// The ops selective recomputation repeats.
  const DenseSet<Operation *> *selective = nullptr;
  /// The gradient function's forward ops.
  const DenseSet<Operation *> *forwardOps = nullptr;
  /// The segment's ops whose results the backward pass reads, directly or
  /// through ops of this segment (what recomputation rebuilds in the last
  /// segment of a stage).
  DenseSet<Operation *> neededInside;

  Placement get(Value v) const { return state.lookup(v); }
  /// Values made as partial sums (each rank's share of the work) and
  /// completed.
  DenseSet<Value> completed;
  /// Values whose softmax statistics over split classes were computed.
  DenseSet<Value> statistics;

  /// `v` is (a view of) a parameter that must stay whole.
  bool keptWhole(Value v) {
    auto it = paramOf.find(v);
    return it != paramOf.end() && whole.count(it->second);
  }

  /// How parameter `name` is split: as this segment decided, else as the
  /// segment that decides it did (nullopt where none decided yet).
  std::optional<TPProfile::ParameterSplit> splitOf(const std::string &name) {
    auto how = decision.find(name);
    if (how == decision.end()) {
      auto other = elsewhere.find(name);
      if (other == elsewhere.end())
        return std::nullopt;
      return other->second;
    }
    auto dim = decisionDim.find(name);
    return TPProfile::ParameterSplit{
        name, how->second, dim == decisionDim.end() ? -1 : dim->second};
  }

  void collective(Collective kind, double elements, const std::string &reason,
                  Operation *where,
                  TPCollective::Pass pass = TPCollective::Pass::Both,
                  bool perSample = true, bool oncePerStep = false) {
    if (t <= 1)
      return;
    TPCollective c;
    c.kind = kind;
    c.elements = perSample ? elements / samples : elements;
    c.reason = reason;
    c.where = describe(where);
    c.pass = pass;
    c.perSample = perSample;
    c.oncePerStep = oncePerStep;
    c.recomputedAtStageEnd = neededInside.contains(where);
    c.ofInput = movingInput;
    c.ofParameter = moving && paramOf.count(moving);
    // (A move of a value recomputation keeps reuses the moved copy.)
    c.ofSelective = pass == TPCollective::Pass::Forward && selective &&
                    selective->contains(where) &&
                    (!moving || selective->contains(moving.getDefiningOp()));
    out.collectives.push_back(std::move(c));
  }
  /// The activation the segment receives, and whether a move of it is
  /// being recorded.
  Value input;
  bool movingInput = false;
  /// The value a move being recorded moves.
  Value moving;

  /// Sequence parallelism: the walk places ops as the partitioner does
  /// with it (parameters placed as the first walk decided).
  bool sequence = false;
  /// A whole table lookup's result under sequence parallelism enters the
  /// token-split region (a local slice), as the partitioner's completion.
  void enterTokens(Value v, Operation *op);
  /// Each parameter (and view of one) at the placement decided for it.
  void placeParameters(func::FuncOp func);
  /// Elements of each parameter as stored.
  llvm::StringMap<double> paramElements;

  /// Completes the partial sums `op` made in `v` (the partitioner does so
  /// right after the op): an all-reduce, which sequence parallelism makes a
  /// reduce-scatter of the tokens of an activation. A value that does not
  /// depend on the batch (a position embedding's rows) moves once per
  /// micro-batch whatever its size.
  void complete(Value v, Operation *op) {
    Placement p = get(v);
    if (!p.isPartial()) {
      enterTokens(v, op);
      return;
    }
    completed.insert(v);
    int64_t tokens = rankOf(v) - 2;
    auto type = cast<RankedTensorType>(v.getType());
    bool scatter = sequence && p.isPartialSum() && makesTokenActivation(op) &&
                   splitsByTokens(op, type) && divisible(v, tokens);
    std::string name = op->getName().getStringRef().str();
    collective(scatter ? Collective::ReduceScatter : Collective::AllReduce,
               valueElements(v),
               (scatter ? "scatter the tokens of the partial sums of "
                        : "complete the partial sums of ") + name,
               op, pass, perSample(v));
    state[v] = scatter ? Placement::split(tokens) : Placement::rep();
  }

  /// Moves `v` to `target` before `user` reads it, as the partitioner
  /// does: a split is all-gathered (or, to a split of another dimension
  /// that divides, moved by an all-to-all and its mirror for the
  /// gradient); a whole value is sliced locally (a parameter among them is
  /// sharded so).
  void move(Value v, Placement target, Operation *user) {
    Placement from = get(v);
    if (from == target)
      return;
    if (from.isRep()) {
      if (target.isSplit() && !keptWhole(v))
        splitParam(v, "split", target.dim);
      return;
    }
    if (!moved.insert({v.getAsOpaquePointer(), target.kind, target.dim,
                       target.groups})
             .second)
      return;
    bool scales = perSample(v);
    std::string name = user->getName().getStringRef().str();
    movingInput = input && v == input;
    moving = v;
    llvm::scope_exit reset([&] {
      movingInput = false;
      moving = Value();
    });
    if (allToAll(v, from, target)) {
      collective(Collective::AllToAll, valueElements(v),
                 "move the split to dimension " + std::to_string(target.dim) +
                     " for " + name,
                 user, pass, scales);
      return;
    }
    collective(Collective::AllGather, valueElements(v),
               "gather dimension " + std::to_string(from.dim) + " for " + name,
               user, pass, scales);
  }

  /// Whether moving `v` from split `from` to split `to` is one all-to-all
  /// (plain splits whose new dimension divides), as the partitioner moves
  /// it; else a gather.
  bool allToAll(Value v, Placement from, Placement to) {
    return from.isSplit() && to.isSplit() && !from.isGrouped() &&
           !to.isGrouped() && divisible(v, to.dim);
  }

  /// Records how parameter view `v` is split: `how`, along its dimension
  /// `dim`, which is traced back to the stored parameter's dimension
  /// through the view's transposes, casts and reshapes (-1 where a reshape
  /// does not keep it whole).
  void splitParam(Value v, const std::string &how, int64_t dim) {
    auto it = paramOf.find(v);
    if (it == paramOf.end() || !decision.emplace(it->second, how).second)
      return;
    while (Operation *d = v.getDefiningOp()) {
      if (dim < 0 || d->getNumOperands() != 1 ||
          !isa<ReshapeOp, TransposeOp, CastOp>(d))
        break;
      if (auto tr = dyn_cast<TransposeOp>(d)) {
        dim = tr.getPermutation()[dim];
      } else if (isa<ReshapeOp>(d)) {
        ArrayRef<int64_t> out = shapeOf(v), in = shapeOf(d->getOperand(0));
        int64_t prefix = 1, found = -1;
        for (int64_t o = 0; o < dim; ++o)
          prefix *= out[o];
        for (int64_t i = 0, p = 1; i < static_cast<int64_t>(in.size()); ++i) {
          if (p == prefix && in[i] % t == 0 && out[dim] % t == 0)
            found = i;
          p *= in[i];
        }
        dim = found;
      }
      v = d->getOperand(0);
    }
    decisionDim[it->second] = dim;
  }

  bool divisible(Value v, int64_t dim) {
    ArrayRef<int64_t> s = shapeOf(v);
    return dim >= 0 && dim < static_cast<int64_t>(s.size()) && s[dim] >= t &&
           s[dim] % t == 0;
  }

  void byRule(Operation *op);
  /// Places a view of a parameter by its views from the parameter.
  void placeView(Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getNumOperands() != 1 ||
        !isa<ReshapeOp, TransposeOp, CastOp>(def))
      return;
    Value from = def->getOperand(0);
    placeView(from);
    paramOf[v] = paramOf.lookup(from);
    byRule(def);
  }
  void walkBackward(func::FuncOp func, ArrayRef<Operation *> ops,
                    ArrayRef<Operation *> backward, const SegmentEnds &ends);
  bool matmul(MatmulOp op);
  bool embedding(EmbeddingOp op);
  bool keepsWorkspaceWhole(Operation *op, bool split);
  bool splitClasses(Operation *op);
  void visit(Operation *op);
};

/// Whether each device holds the whole of `op`'s lowering workspace (and
/// runs the whole of its side work) once `op` is placed, where `split`
/// says whether its results are split. A convolution's columns are
/// gathered from its input (a data gradient's summed into its result), so
/// a split of output channels leaves them whole; attention's scores split
/// with its heads.
bool Analysis::keepsWorkspaceWhole(Operation *op, bool split) {
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](ConvOp c) { return !get(c.getInput()).isSplit(); })
      .Case([&](ConvWeightGradOp c) { return !get(c.getInput()).isSplit(); })
      .Case([&](ConvTransposeOp c) { return !get(c.getResult()).isSplit(); })
      .Default([&](Operation *) { return !split; });
}

/// The op placed by its rule (`decide`): each operand moved to the
/// placement the decision asks for, partial results completed. Sequence
/// parallelism first gathers the tokens some matmuls read whole
/// (gatherTokensFor, as the partitioner does).
void Analysis::byRule(Operation *op) {
  SmallVector<Placement> in;
  for (Value v : op->getOperands())
    in.push_back(get(v));
  if (llvm::all_of(in, [](Placement p) { return p.isRep(); })) {
    for (Value r : op->getResults())
      enterTokens(r, op);
    return;
  }
  if (sequence)
    gatherTokensFor(op, in);
  AxisDecision d = decide(op, in, t);
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    move(v, d.operands[i], op);
  for (auto [r, res] : llvm::enumerate(op->getResults())) {
    state[res] = d.results[r];
    complete(res, op);
  }
}

/// Megatron-LM's matmuls with a parameter weight: on a whole activation
/// the weight splits by columns (each rank's share of the input's gradient
/// is summed backward); on an activation split along the contraction it
/// splits by rows (partial sums, completed by an all-reduce). Other matmuls
/// are placed by their rule. Returns whether it placed `op`.
bool Analysis::matmul(MatmulOp op) {
  Value a = op.getLhs(), b = op.getRhs();
  int64_t ra = rankOf(a), rb = rankOf(b), r = rankOf(op.getResult());
  if (ra < 2 || rb < 2)
    return false;
  Placement sa = get(a), sb = get(b);
  if (sa.isRep() && sb.isRep()) {
    if (paramOf.count(b) && !keptWhole(b) && activation.contains(a) &&
        divisible(b, rb - 1)) {
      splitParam(b, "column", rb - 1);
      // A fused projection's columns split in the groups its output is
      // sliced into (as the partitioner places the weight).
      int64_t groups = 1;
      std::string name = paramOf.lookup(b);
      auto how = decision.find(name);
      auto dim = decisionDim.find(name);
      if (auto arg = dyn_cast<BlockArgument>(viewRoot(b));
          arg && how != decision.end() && how->second == "column" &&
          dim != decisionDim.end() && dim->second >= 0)
        groups = sliceGroups(arg, dim->second, t);
      state[op.getResult()] = Placement::split(r - 1, groups);
    }
    return true;
  }
  // A whole weight on an activation split along the contraction: the
  // activation is gathered (below, by the rule); a parameter weight there
  // splits by rows.
  bool aK = sa.isSplit() && sa.dim == ra - 1;
  if (aK && sb.isRep() && !keptWhole(b) && paramOf.count(b))
    splitParam(b, "row", rb - 2);
  return false;
}

/// A table that whole indices look up splits by rows (a vocabulary-parallel
/// embedding): each rank's partial lookup is completed by an all-reduce.
bool Analysis::embedding(EmbeddingOp e) {
  Value table = e.getTable();
  Placement p = get(table);
  // (Under sequence parallelism the table holds its decided placement.)
  bool placed = sequence ? p.isSplit() && p.dim == 0 && !p.isGrouped()
                         : p.isRep() && paramOf.count(table) &&
                               !keptWhole(table) && divisible(table, 0);
  if (!get(e.getIndices()).isRep() || !placed)
    return false;
  splitParam(table, "vocab", 0);
  state[e.getResult()] = Placement::partial();
  complete(e.getResult(), e);
  return true;
}

/// A softmax or cross-entropy over split classes (the logits of a
/// column-parallel head) keeps them split and all-reduces its statistics
/// (Megatron's vocabulary-parallel cross-entropy), and the softmax's
/// gradient its sum over them; the partitioner's vocabulary-parallel
/// rebuild. Returns whether it placed `op`.
bool Analysis::splitClasses(Operation *op) {
  Value x = op->getOperand(0);
  Placement in = get(x);
  int64_t axis = rankOf(x) - 1;
  if (!runsOverSplitClasses(op) || !in.isSplit() || in.dim != axis ||
      llvm::any_of(op->getOperands().drop_front(),
                   [&](Value v) { return !get(v).isRep(); }))
    return false;
  // The statistics are computed once per value (a cross-entropy's
  // gradient reuses its forward's softmax statistics).
  bool first = statistics.insert(x).second;
  // (Of a received input that recomputation keeps, the program keeps them
  // too.)
  movingInput = input && x == input;
  llvm::scope_exit reset([&] { movingInput = false; });
  if (auto s = dyn_cast<SoftmaxOp>(op)) {
    if (first)
      collective(Collective::AllReduce, statisticsElements(op, 0, in.dim),
                 "softmax statistics over the split axis", op, pass);
    state[s.getResult()] = in;
    return true;
  }
  // Max, sum and target logit (and the sum of logits with label
  // smoothing).
  collective(Collective::AllReduce, statisticsElements(op, 0, axis),
             "cross-entropy statistics over the split classes", op, pass);
  return true;
}

void Analysis::enterTokens(Value v, Operation *op) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (sequence && type && get(v).isRep() && isTableLookup(op) &&
      isa<FloatType>(type.getElementType()) && splitsByTokens(op, type) &&
      divisible(v, rankOf(v) - 2))
    state[v] = Placement::split(rankOf(v) - 2);
}

/// Parameter views (reshape, transpose, cast) keep their parameter, whose
/// sharding is decided where the view is used.
static bool isParamView(Operation *op, const DenseMap<Value, std::string> &params) {
  return isa<ReshapeOp, TransposeOp, CastOp>(op) && op->getNumOperands() == 1 &&
         params.count(op->getOperand(0));
}

void Analysis::placeParameters(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    auto it = paramOf.find(arg);
    if (it == paramOf.end())
      continue;
    std::optional<TPProfile::ParameterSplit> split = splitOf(it->second);
    if (split && split->how != "replicated" && split->dim >= 0 &&
        !keptWhole(arg))
      state[arg] =
          Placement::split(split->dim, sliceGroups(arg, split->dim, t));
  }
}

/// The backward pass of the segment, placed like the forward one: each
/// parameter holds the placement decided for it (a fused projection's in
/// its groups, as the partitioner places it) and its views follow; each
/// backward op is placed by its rule, its partial sums completed (a
/// column-parallel matmul's input gradient, a softmax gradient's sum over
/// split classes). A parameter's gradient left split where the parameter
/// is not is gathered once per step, for the optimizer. A parameter
/// another segment decides holds the placement chosen there (`elsewhere`;
/// whole in the first analysis, before that is known).
void Analysis::walkBackward(func::FuncOp func, ArrayRef<Operation *> ops,
                            ArrayRef<Operation *> backward,
                            const SegmentEnds &ends) {
  pass = TPCollective::Pass::Backward;
  placeParameters(func);
  for (Operation *op : ops)
    if (isParamView(op, paramOf))
      byRule(op);
  DenseSet<Operation *> mine(backward.begin(), backward.end()),
      inSegment(ops.begin(), ops.end());
  for (Operation *op : backward) {
    if (isParamView(op, paramOf))
      paramOf[op->getResult(0)] = paramOf.lookup(op->getOperand(0));
    // A view of a parameter another segment's forward ops made holds the
    // parameter's placement through it.
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp();
          def && forwardOps->contains(def) && !inSegment.contains(def))
        if (BlockArgument root = parameterRoot(v); root && paramOf.count(root))
          placeView(v);
    // Gradients other segments' backward ops hand over depend on the batch.
    // The next segment's gradient of the activation this one hands it
    // comes split as that segment's backward pass left it (before that is
    // known, as the activation is split).
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp();
          def && !forwardOps->contains(def) && !mine.contains(def) &&
          !def->hasTrait<OpTrait::ConstantLike>()) {
        if (!activation.insert(v).second || !ends.out ||
            v.getType() != ends.out.getType())
          continue;
        TPBoundary g = ends.gradientIn.value_or(out.boundary);
        if (g.isSplit())
          state[v] = Placement::split(g.dim, g.groups);
      }
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return activation.contains(v); }))
      for (Value r : op->getResults())
        activation.insert(r);
    if (isa<SoftmaxOp, CrossEntropyOp>(op) && splitClasses(op))
      continue;
    byRule(op);
  }
  // The gradient of the activation it received, as the previous
  // segment's backward pass gets it.
  for (Operation *op : backward)
    for (Value r : op->getResults())
      if (ends.in && r.getType() == ends.in.getType() &&
          llvm::any_of(r.getUsers(), [&](Operation *u) {
            return !mine.contains(u) && !forwardOps->contains(u) &&
                   !isa<func::ReturnOp>(u);
          }))
        if (Placement p = get(r); p.isSplit())
          out.gradientOut = {p.dim, p.groups};
  for (auto [arg, g] : parameterGradients(func)) {
    Operation *def = g.getDefiningOp();
    Placement now = get(g), want = get(arg);
    const std::string &name = paramOf.lookup(arg);
    // (A gradient another segment's backward ops make is priced there.)
    if (!def || !mine.contains(def) || !now.isSplit() || now == want ||
        !splitOf(name))
      continue;
    // As `move` does.
    collective(allToAll(g, now, want) ? Collective::AllToAll
                                      : Collective::AllGather,
               paramElements.lookup(name),
               "gather the gradient of " + name + " for its placement", def,
               pass, /*perSample=*/false, /*oncePerStep=*/true);
  }
}

void Analysis::visit(Operation *op) {
  if (isParamView(op, paramOf)) {
    paramOf[op->getResult(0)] = paramOf.lookup(op->getOperand(0));
    if (sequence)
      byRule(op);
    return;
  }
  if (auto m = dyn_cast<MatmulOp>(op); m && !sequence && matmul(m))
    return;
  if (auto e = dyn_cast<EmbeddingOp>(op); e && embedding(e))
    return;
  if (isa<SoftmaxOp, CrossEntropyOp>(op) && splitClasses(op))
    return;
  byRule(op);
}

/// `op`'s GEMM per sample, and the dimension the walk split it along:
/// partial sums split the depth, a split of the result's last dimension
/// the columns, of another dimension the rows (batch and heads fold into
/// rows).
TPProfile::Gemm gemmOf(const Analysis &a, Operation *op, const OpWork &work,
                       double samples, bool split) {
  using G = TPProfile::Gemm;
  G g{work.flops / samples, work.m / samples, work.n, work.k, G::None,
      work.rows};
  g.computed = work.computed;
  if (!split || op->getNumResults() == 0)
    return g;
  Value r = op->getResult(0);
  Placement at = a.get(r);
  if (a.completed.contains(r) || at.isPartial())
    g.split = G::Depth;
  else if (at.isSplit()) {
    int64_t rank = cast<RankedTensorType>(r.getType()).getRank();
    g.split = at.dim + 1 == rank ? G::Columns : G::Rows;
    // Split within each product's rows (not across products): each device
    // runs every product on fewer rows.
    if (g.rows > 0 && at.dim + 2 == rank)
      g.rows /= a.t;
  }
  return g;
}
} // namespace

/// One walk of the segment (`a` without or with sequence parallelism).
/// An attention softmax (over the last axis of a rank-3+ value) as each
/// device holds it; nullopt for other softmaxes.
static std::optional<TPProfile::Softmax> attentionSoftmax(const Analysis &a,
                                                          SoftmaxOp op) {
  auto type = dyn_cast<RankedTensorType>(op.getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 3 ||
      static_cast<int64_t>(op.getAxis()) != type.getRank() - 1)
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  double batches = 1;
  for (int64_t d : shape.drop_back(2))
    batches *= static_cast<double>(d);
  double keys = static_cast<double>(shape.back());
  double rows = static_cast<double>(shape[shape.size() - 2]);
  Placement p = a.get(op.getResult());
  double split = p.isSplit() ? static_cast<double>(a.t) : 1;
  // A split of the queries or keys leaves the batches whole.
  double batchSplit = p.isSplit() && p.dim < type.getRank() - 2 ? split : 1;
  return TPProfile::Softmax{batches / a.samples / batchSplit,
                            batches * rows * keys / a.samples / split,
                            p.isSplit() && p.dim == type.getRank() - 1
                                ? keys / split
                                : keys};
}

static void walkSegment(Analysis &a, ArrayRef<Operation *> ops,
                        ArrayRef<Operation *> backward,
                        const DenseSet<Value> &saved,
                        const DenseSet<Operation *> &selective,
                        const DenseSet<Operation *> &forward,
                        const SegmentEnds &ends,
                        const DenseMap<Value, int64_t> &batchDims) {
  int64_t degree = a.t;
  const Cluster &cluster = a.cluster;
  StringRef precision = a.precision;
  double samples = a.samples;
  a.out.degree = degree;
  a.forwardOps = &forward;
  a.batchDims = &batchDims;
  a.selective = &selective;
  a.input = ends.in;
  if (ops.empty())
    return;
  DenseSet<Operation *> inSegment(ops.begin(), ops.end());
  auto func = ops.front()->getParentOfType<func::FuncOp>();
  for (BlockArgument arg : func.getArguments()) {
    if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      "ober.param")) {
      a.paramOf[arg] = name.str();
      a.paramElements[name.getValue()] = valueElements(arg);
    }
    else
      a.activation.insert(arg);
  }
  // Values of earlier segments are parameter views or activations.
  SmallVector<Value> earlierViews;
  for (Operation *op : ops)
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || inSegment.contains(def) ||
          def->hasTrait<OpTrait::ConstantLike>())
        continue;
      Value root = viewRoot(v);
      if (a.paramOf.count(root)) {
        a.paramOf[v] = a.paramOf.lookup(root);
        earlierViews.push_back(v);
      } else {
        a.activation.insert(v);
      }
    }
  // The second walk starts from the parameters the first one placed.
  if (a.sequence) {
    a.placeParameters(func);
    for (Value v : earlierViews)
      a.placeView(v);
  }
  // A backward op runs with the latest forward op that reads what it
  // reads (as the partitioner places it): one reading a value that a later
  // segment reads too is that segment's.
  for (Operation *op : llvm::reverse(ops))
    for (Value r : op->getResults()) {
      bool readLater = llvm::any_of(r.getUsers(), [&](Operation *u) {
        return forward.contains(u) && !inSegment.contains(u);
      });
      if (llvm::any_of(r.getUsers(), [&](Operation *u) {
            return (!forward.contains(u) && !isa<func::ReturnOp>(u) &&
                    !readLater) ||
                   (inSegment.contains(u) && a.neededInside.contains(u));
          }))
        a.neededInside.insert(op);
    }
  // The previous segment's split of the activation it hands over.
  if (ends.in && ends.incoming.isSplit() && degree > 1)
    a.state[ends.in] =
        Placement::split(ends.incoming.dim, ends.incoming.groups);
  for (Operation *op : ops) {
    bool act = llvm::any_of(op->getOperands(), [&](Value v) {
      return a.activation.contains(v);
    });
    bool view = isParamView(op, a.paramOf);
    if (act)
      for (Value r : op->getResults())
        a.activation.insert(r);
    a.visit(op);
    // Parameters an op reads whole stay replicated.
    if (!view)
      for (Value v : op->getOperands())
        if (a.paramOf.count(v))
          a.decision.emplace(a.paramOf.lookup(v), "replicated");
    // The class of this op's work and of the activations it saves.
    // Split work: results split, or partial sums (completed since).
    bool split = llvm::any_of(op->getResults(), [&](Value r) {
      return !a.get(r).isRep() || a.completed.contains(r);
    });
    OpWork work = workOf(op, 0, cluster.attention);
    // Time on matrix units (GEMM tables price it) or elsewhere; FLOPs and
    // saved activations by what the op is.
    bool matrix = work.onMatrixUnits(), contraction = work.matmul;
    bool needed = a.neededInside.contains(op);
    if (matrix) {
      a.out.gemms.push_back(gemmOf(a, op, work, samples, split));
      a.out.gemms.back().needed = needed;
    }
    double seconds = opSeconds(op, cluster, precision, saved) / samples;
    double kernel = endsKernel(op, saved);
    // Attention's work between its products, or a convolution's gather:
    // the other class's, split where the workspace it goes through is.
    SideWork side = sideWork(op, cluster, precision);
    side.seconds /= samples;
    kernel += side.kernels;
    bool wholeSide = a.keepsWorkspaceWhole(op, split);
    if (wholeSide)
      a.out.wholeWorkspace =
          std::max(a.out.wholeWorkspace,
                   loweringWorkspace(op, cluster, precision) / samples);
    a.out.forwardKernels += kernel;
    if (auto softmax = dyn_cast<SoftmaxOp>(op))
      if (std::optional<TPProfile::Softmax> s = attentionSoftmax(a, softmax)) {
        s->selective = selective.contains(op);
        s->needed = needed;
        a.out.softmaxes.push_back(*s);
      }
    if (selective.contains(op))
      a.out.selectiveKernels += kernel;
    auto slotOf = [&](ByTP &time) -> double & {
      return split ? time.split : (act && !contraction) ? time.seq : time.full;
    };
    auto sideSlotOf = [&](ByTP &time) -> double & {
      return wholeSide ? time.full : time.split;
    };
    slotOf(matrix ? a.out.forwardMatmul : a.out.forwardOther) += seconds;
    sideSlotOf(a.out.forwardOther) += side.seconds;
    if (needed) {
      slotOf(matrix ? a.out.neededMatmul : a.out.neededOther) += seconds;
      sideSlotOf(a.out.neededOther) += side.seconds;
      a.out.neededKernels += kernel;
      if (contraction)
        a.out.neededFlops += work.flops / samples;
    }
    if (selective.contains(op)) {
      slotOf(a.out.selectiveTime) += seconds;
      sideSlotOf(a.out.selectiveTime) += side.seconds;
      if (contraction)
        a.out.selectiveFlops += work.flops / samples;
    }
    for (Value r : op->getResults()) {
      if (!saved.contains(r))
        continue;
      double n = valueBytes(r, precisionBytes(precision)) / samples;
      bool rSplit = !a.get(r).isRep() || a.completed.contains(r);
      double &s = rSplit ? a.out.saved.split
                  : (act && !contraction) ? a.out.saved.seq
                                     : a.out.saved.full;
      s += n;
      if (selective.contains(op))
        (rSplit ? a.out.selectiveSaved.split
                : (act && !contraction) ? a.out.selectiveSaved.seq
                                   : a.out.selectiveSaved.full) += n;
    }
  }
  // What leaves the segment must be whole again, except a split
  // activation handed to the next segment (it stays split there) and
  // views of parameters (placed where they are read).
  for (Operation *op : ops)
    for (Value r : op->getResults()) {
      if (a.paramOf.count(r))
        continue;
      bool returned = llvm::any_of(r.getUsers(), [](Operation *u) {
        return isa<func::ReturnOp>(u);
      });
      bool later = llvm::any_of(r.getUsers(), [&](Operation *u) {
        return forward.contains(u) && !inSegment.contains(u);
      });
      if (r == ends.out && !returned && a.get(r).isSplit())
        continue;
      if (returned || later) {
        a.move(r, Placement::rep(), op);
        a.state[r] = Placement::rep();
      }
    }
  if (ends.out && a.get(ends.out).isSplit())
    a.out.boundary = {a.get(ends.out).dim, a.get(ends.out).groups};
  if (degree > 1)
    a.walkBackward(func, ops, backward, ends);
  // Parameters: elements by decision (the first decision of a parameter
  // used several times wins; "replicated" is recorded after any split of
  // the same op, so a split decision made by that op comes first).
  for (BlockArgument arg : func.getArguments()) {
    auto it = a.paramOf.find(arg);
    if (it == a.paramOf.end())
      continue;
    // Its memory counts where an op (or a view of it) reads it; its
    // placement is decided where an op that is not a view reads it
    // (directly or through a view made elsewhere, like a tied head's
    // transpose), and must agree between such segments.
    bool direct = llvm::any_of(arg.getUsers(), [&](Operation *u) {
      return inSegment.contains(u);
    });
    bool decides = llvm::any_of(ops, [&](Operation *op) {
      return !isParamView(op, a.paramOf) &&
             llvm::any_of(op->getOperands(),
                          [&](Value v) { return viewRoot(v) == arg; });
    });
    if (!direct && !decides)
      continue;
    // A parameter no rule decided on (read through an op without one) is
    // whole on every device.
    auto d = a.decision.find(it->second);
    bool replicated =
        d == a.decision.end() || d->second == "replicated" || degree == 1;
    if (direct)
      (replicated ? a.out.parameters.full : a.out.parameters.split) +=
          valueElements(arg);
    if (decides)
      a.out.parameterSharding.push_back(
        {it->second, replicated ? "replicated" : d->second,
         replicated ? -1 : a.decisionDim[it->second]});
  }
}

TPProfile mlir::ober::planning::analyseTensorParallel(
    ArrayRef<Operation *> ops, ArrayRef<Operation *> backward, int64_t degree,
    const Cluster &cluster, StringRef precision, double samples,
    const DenseSet<Value> &saved, const DenseSet<Operation *> &selective,
    const DenseSet<Operation *> &forward, const SegmentEnds &ends,
    const DenseMap<Value, int64_t> &batchDims, const KnownParameters &known) {
  Analysis a(degree, cluster, precision, samples, known);
  walkSegment(a, ops, backward, saved, selective, forward, ends, batchDims);
  if (degree == 1 || ops.empty())
    return std::move(a.out);
  // Sequence parallelism: the same parameters, tokens split outside the
  // tensor-parallel regions.
  Analysis sp(degree, cluster, precision, samples, known);
  sp.sequence = true;
  sp.decision = a.decision;
  sp.decisionDim = a.decisionDim;
  SegmentEnds tokens = ends;
  tokens.incoming = ends.sequenceIncoming;
  tokens.gradientIn = ends.sequenceGradientIn;
  walkSegment(sp, ops, backward, saved, selective, forward, tokens,
              batchDims);
  a.out.sequenceCollectives = std::move(sp.out.collectives);
  a.out.sequenceBoundary = sp.out.boundary;
  a.out.sequenceGradientOut = sp.out.gradientOut;
  return std::move(a.out);
}
