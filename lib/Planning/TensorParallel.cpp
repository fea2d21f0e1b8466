//===- TensorParallel.cpp - what tensor parallelism does to a segment -----===//
//
// Part of Ober-Train. A forward propagation of shardings over one segment's
// ops for a tensor-parallel degree t, in the style of Megatron-LM: a matmul
// with a parameter weight and a replicated input splits its weight by
// columns, one whose input is split along the contraction splits its weight
// by rows and leaves partial sums, which an all-reduce completes. Splits
// follow elementwise ops, reshapes (heads), transposes, splits and batched
// matmuls (attention); an op that cannot take a split gathers it first. The
// result is what the planner needs: which work and activations divide by t,
// which parameters shard, and which collectives the split costs.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/ModelProfile.h"

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Dialect/Ober/IR/ShardingRules.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::planning;

namespace {
enum class Kind { Rep, Shard, Partial };
/// A split: index i of dimension `dim` lives on rank (i / stride) mod t.
/// A plain block split has stride = size / t; a dimension that merged the
/// split one with outer dimensions (batch x heads) has a smaller stride.
struct State {
  Kind kind = Kind::Rep;
  int64_t dim = -1, stride = 0;
  static State shard(int64_t d, int64_t stride) {
    return {Kind::Shard, d, stride};
  }
  static State partial() { return {Kind::Partial, -1, 0}; }
  bool sameSplit(const State &o) const {
    return kind == o.kind && dim == o.dim && stride == o.stride;
  }
};

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
           double samples, const std::set<std::string> &whole)
      : t(t), cluster(cluster), precision(precision), samples(samples),
        whole(whole) {}
  int64_t t;
  const Cluster &cluster;
  StringRef precision;
  double samples;
  /// Parameters that stay whole (tied ones the segments disagree on).
  const std::set<std::string> &whole;
  TPProfile out;
  DenseMap<Value, State> state;
  /// Parameter values (and reshapes/transposes/casts of them) with the
  /// parameter's name: their sharding is free to choose.
  DenseMap<Value, std::string> paramOf;
  std::map<std::string, std::string> decision;
  std::map<std::string, int64_t> decisionDim;
  /// Values that depend on the batch.
  DenseSet<Value> activation;
  /// The gradient function's forward ops.
  const DenseSet<Operation *> *forwardOps = nullptr;
  /// The segment's ops whose results the backward pass reads, directly or
  /// through ops of this segment (what recomputation rebuilds in the last
  /// segment of a stage).
  DenseSet<Operation *> neededInside;

  State get(Value v) { return state.lookup(v); }

  /// `v` is (a view of) a parameter that must stay whole.
  bool keptWhole(Value v) {
    auto it = paramOf.find(v);
    return it != paramOf.end() && whole.count(it->second);
  }

  void collective(Collective kind, double elements, const std::string &reason,
                  Operation *where,
                  TPCollective::Pass pass = TPCollective::Pass::Both,
                  bool sequenceSwap = false, bool sequenceOnly = false,
                  bool perSample = true, bool oncePerStep = false) {
    if (t <= 1)
      return;
    out.collectives.push_back({kind, perSample ? elements / samples : elements,
                               reason, describe(where), pass, sequenceSwap,
                               sequenceOnly, perSample, oncePerStep,
                               neededInside.contains(where)});
  }

  /// Under sequence parallelism, the activations outside the
  /// tensor-parallel regions are split by tokens (their dimension rank - 2):
  /// what a completed partial sum becomes (a reduce-scatter), what the ops
  /// after it make, and what a segment gets from the one before it.
  DenseSet<Value> tokens;
  void sequenceGradients(Operation *op);
  void sequenceReduction(Operation *op);
  /// Elements of each parameter as stored.
  llvm::StringMap<double> paramElements;

  /// Values that depend on a parameter: their gradient is computed.
  DenseMap<Value, bool> gradient;
  bool needsGradient(Value v) {
    if (auto it = gradient.find(v); it != gradient.end())
      return it->second;
    bool needs = false;
    if (auto arg = dyn_cast<BlockArgument>(v))
      needs = paramOf.count(arg) > 0;
    else if (Operation *def = v.getDefiningOp())
      needs = llvm::any_of(def->getOperands(),
                           [&](Value o) { return needsGradient(o); });
    return gradient[v] = needs;
  }

  /// Makes `v` replicated before `user` reads it. A value that does not
  /// depend on the batch (a position embedding's rows) moves once per
  /// micro-batch whatever its size.
  void gather(Value v, Operation *user) {
    State s = get(v);
    bool perSample = activation.contains(v);
    if (s.kind == Kind::Partial) {
      collective(Collective::AllReduce, valueElements(v),
                 "complete the partial sums before " +
                     user->getName().getStringRef().str(),
                 v.getDefiningOp() ? v.getDefiningOp() : user,
                 TPCollective::Pass::Forward,
                 /*sequenceSwap=*/hasTokensOf(v), /*sequenceOnly=*/false,
                 perSample);
      if (hasTokensOf(v))
        tokens.insert(v);
    }
    else if (s.kind == Kind::Shard)
      collective(Collective::AllGather, valueElements(v),
                 "gather dimension " + std::to_string(s.dim) + " for " +
                     user->getName().getStringRef().str(),
                 user, TPCollective::Pass::Forward, /*sequenceSwap=*/false,
                 /*sequenceOnly=*/false, perSample);
    else
      return;
    state[v] = State();
  }

  /// Completes a partial sum; a split stays split.
  void unpartial(Value v, Operation *user) {
    if (get(v).kind == Kind::Partial)
      gather(v, user);
  }

  void gatherAll(Operation *op) {
    for (Value v : op->getOperands())
      gather(v, op);
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

  /// A plain block split of `dim` of `v`.
  State block(Value v, int64_t dim) {
    return State::shard(dim, shapeOf(v)[dim] / t);
  }

  bool divisible(Value v, int64_t dim) {
    ArrayRef<int64_t> s = shapeOf(v);
    return dim >= 0 && dim < static_cast<int64_t>(s.size()) && s[dim] >= t &&
           s[dim] % t == 0;
  }

  void setAll(Operation *op, State s) {
    for (Value r : op->getResults())
      state[r] = s;
  }

  /// A matmul of a whole parameter weight on token-split activations
  /// (sequence parallelism gathers the tokens for it).
  bool gathersTokens(MatmulOp op) {
    Value a = op.getLhs(), b = op.getRhs();
    // The weight, or (before its view is visited) the parameter it views.
    Value w = paramOf.count(b) ? b : viewRoot(b);
    int64_t rb = rankOf(b);
    return tokens.contains(a) && get(a).kind == Kind::Rep &&
           get(b).kind == Kind::Rep && paramOf.count(w) && rb >= 2 &&
           (keptWhole(w) || !divisible(b, rb - 1));
  }
  /// Whether sequence parallelism splits `v` by its tokens when it enters
  /// the token-split region (hasTokens, as the partitioner decides): rows
  /// are samples unless a lookup of constant ids (positions) made them.
  bool hasTokensOf(Value v) {
    Operation *def = v.getDefiningOp();
    return isa<FloatType>(getElementTypeOrSelf(v.getType())) &&
           ober::hasTokens(rankOf(v), !(def && looksUpSharedRows(def)));
  }
  void elementwise(Operation *op);
  void matmul(MatmulOp op);
  void reshape(ReshapeOp op);
  void visit(Operation *op);
};

void Analysis::elementwise(Operation *op) {
  int64_t r = op->getNumResults() ? rankOf(op->getResult(0)) : 0;
  bool allPartial = isa<AddOp, SubOp>(op) &&
                    llvm::all_of(op->getOperands(), [&](Value v) {
                      return get(v).kind == Kind::Partial;
                    });
  if (allPartial) {
    setAll(op, State::partial());
    return;
  }
  int64_t dim = -1, stride = 0;
  for (Value v : op->getOperands()) {
    State s = get(v);
    if (s.kind == Kind::Partial) {
      gather(v, op);
      continue;
    }
    if (s.kind != Kind::Shard)
      continue;
    int64_t d = s.dim + (r - rankOf(v));
    if (dim < 0) {
      dim = d;
      stride = s.stride;
    } else if (d != dim || s.stride != stride) {
      // A block split moving to another dimension that divides: an
      // all-to-all (and its mirror for the gradient); else gathered.
      int64_t target = dim - (r - rankOf(v));
      bool plain = s.stride == shapeOf(v)[s.dim] / t && stride != 0 &&
                   d != dim;
      if (plain && target >= 0 && divisible(v, target) &&
          stride == shapeOf(v)[target] / t)
        collective(Collective::AllToAll, valueElements(v),
                   "move the split to dimension " + std::to_string(target) +
                       " for " + op->getName().getStringRef().str(),
                   op, TPCollective::Pass::Both);
      else
        gather(v, op);
    }
  }
  if (dim < 0)
    return;
  // A parameter kept whole that covers the split dimension: compute whole.
  for (Value v : op->getOperands()) {
    int64_t d = dim - (r - rankOf(v));
    if (keptWhole(v) && d >= 0 && shapeOf(v)[d] != 1) {
      gatherAll(op);
      return;
    }
  }
  // Replicated operands that cover the split dimension are sliced locally;
  // a parameter among them is sharded the same way.
  for (Value v : op->getOperands()) {
    int64_t d = dim - (r - rankOf(v));
    if (get(v).kind == Kind::Rep && d >= 0 && shapeOf(v)[d] != 1)
      splitParam(v, "split", d);
  }
  for (Value res : op->getResults())
    if (rankOf(res) == r)
      state[res] = State::shard(dim, stride);
}

void Analysis::matmul(MatmulOp op) {
  Value a = op.getLhs(), b = op.getRhs();
  unpartial(a, op);
  unpartial(b, op);
  int64_t ra = rankOf(a), rb = rankOf(b), r = rankOf(op.getResult());
  if (ra < 2 || rb < 2) {
    gatherAll(op);
    return;
  }
  State sa = get(a), sb = get(b);
  auto resultDimOfA = [&](int64_t d) { return d + (r - ra); };
  auto resultDimOfB = [&](int64_t d) { return d == rb - 1 ? r - 1 : d + (r - rb); };
  bool aK = sa.kind == Kind::Shard && sa.dim == ra - 1;
  bool bK = sb.kind == Kind::Shard && sb.dim == rb - 2;
  if (sa.kind == Kind::Rep && sb.kind == Kind::Rep) {
    if (gathersTokens(op)) {
      // A whole weight on token-split activations: the tokens are gathered
      // (and the input's gradient is whole); the weight gradient gathers
      // them again, or, when they are larger than twice the weight, sums
      // each rank's share of it.
      double tokenElements = valueElements(a);
      collective(Collective::AllGather, tokenElements,
                 "gather the tokens for a whole weight", op,
                 TPCollective::Pass::Forward, /*sequenceSwap=*/false,
                 /*sequenceOnly=*/true);
      if (tokenElements <= 2 * valueElements(b))
        collective(Collective::AllGather, tokenElements,
                   "gather the tokens again for the weight gradient", op,
                   TPCollective::Pass::Backward, /*sequenceSwap=*/false,
                   /*sequenceOnly=*/true);
      else
        collective(Collective::AllReduce, paramElements.lookup(paramOf.lookup(b)),
                   "complete the weight gradient over each rank's tokens", op,
                   TPCollective::Pass::Backward, /*sequenceSwap=*/false,
                   /*sequenceOnly=*/true, /*perSample=*/false);
      return;
    }
    if (paramOf.count(b) && !keptWhole(b) && activation.contains(a) &&
        divisible(b, rb - 1)) {
      splitParam(b, "column", rb - 1);
      state[op.getResult()] = block(op.getResult(), r - 1);
      // Each rank's share of the input's gradient: summed backward.
      if (needsGradient(a))
        collective(Collective::AllReduce, valueElements(a),
                   "complete the input gradient of a column-parallel matmul",
                   op, TPCollective::Pass::Backward,
                   /*sequenceSwap=*/ober::hasTokens(rankOf(a), true));
      // With sequence parallelism the weight gradient gathers the tokens
      // again (only each rank's share is kept; Korthikanti et al.), when
      // they were split (a batch input never is).
      if (tokens.contains(a))
        collective(Collective::AllGather, valueElements(a),
                   "gather the tokens again for the weight gradient", op,
                   TPCollective::Pass::Backward, /*sequenceSwap=*/false,
                   /*sequenceOnly=*/true);
    }
    return;
  }
  if (aK && sb.kind == Kind::Rep && keptWhole(b)) {
    gatherAll(op);
    return;
  }
  if (aK && (bK || sb.kind == Kind::Rep)) {
    if (sb.kind == Kind::Rep)
      splitParam(b, "row", rb - 2);
    state[op.getResult()] = State::partial();
    return;
  }
  if (sa.kind == Kind::Shard && !aK &&
      (sb.kind == Kind::Rep ||
       (sb.kind == Kind::Shard && sb.dim < rb - 2 && sb.stride == sa.stride &&
        resultDimOfB(sb.dim) == resultDimOfA(sa.dim)))) {
    state[op.getResult()] = State::shard(resultDimOfA(sa.dim), sa.stride);
    return;
  }
  if (sa.kind == Kind::Rep && sb.kind == Kind::Shard && !bK) {
    state[op.getResult()] = State::shard(resultDimOfB(sb.dim), sb.stride);
    return;
  }
  gatherAll(op);
}

void Analysis::reshape(ReshapeOp op) {
  State s = get(op.getInput());
  if (s.kind != Kind::Shard) {
    if (s.kind == Kind::Partial)
      setAll(op, s);
    return;
  }
  // The rank digit sits at linear stride `digit` (in elements of the
  // row-major layout) with extent t; find the output dimension that holds
  // it whole.
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op.getResult());
  int64_t digit = s.stride;
  for (int64_t i = s.dim + 1; i < static_cast<int64_t>(in.size()); ++i)
    digit *= in[i];
  int64_t inner = 1;
  for (int64_t j = static_cast<int64_t>(out.size()) - 1; j >= 0; --j) {
    int64_t span = inner * out[j];
    if (digit % inner == 0 && span % (digit * t) == 0) {
      state[op.getResult()] = State::shard(j, digit / inner);
      return;
    }
    inner = span;
  }
  gather(op.getInput(), op);
}

/// An op that reduces over the tokens of a token-split operand (a loss over
/// [tokens, classes], a sum over the sequence) leaves each rank's partial
/// result, completed by an all-reduce (its rule's reduction factor); a
/// scalar (the loss) once per micro-batch.
void Analysis::sequenceReduction(Operation *op) {
  std::optional<ShardingRule> rule = getShardingRule(op);
  if (!rule)
    return;
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    int64_t dim = rankOf(v) - 2;
    if (!tokens.contains(v) || get(v).kind != Kind::Rep || dim < 0 ||
        rule->operands[i][dim].empty())
      continue;
    const ShardingFactor &f = rule->factors[rule->operands[i][dim].front()];
    if (f.kind != FactorKind::Reduction)
      continue;
    Value r = op->getResult(0);
    collective(Collective::AllReduce, valueElements(r),
               "complete the partial " + op->getName().getStringRef().str() +
                   " over each rank's tokens",
               op, TPCollective::Pass::Forward, /*sequenceSwap=*/false,
               /*sequenceOnly=*/true, /*perSample=*/rankOf(r) > 0);
    return;
  }
}

/// A whole parameter that an op combines with token-split activations gets
/// a gradient of each rank's tokens: partial sums, completed by an
/// all-reduce (a norm's scale and bias, a bias after a row-parallel
/// matmul) in each micro-batch, or, when the parameter spans the tokens
/// itself (a position embedding), a block of them, accumulated over the
/// micro-batches and gathered once for the optimizer. A matmul gathers the tokens
/// instead (column-parallel), and an embedding reads indices.
void Analysis::sequenceGradients(Operation *op) {
  // A whole lookup enters the token-split region (a slice); its backward
  // gathers the tokens' gradient for the table's.
  if (isTableLookup(op)) {
    Value r = op->getResult(0);
    if (get(r).kind == Kind::Rep && hasTokensOf(r)) {
      tokens.insert(r);
      // Rows of samples (token ids), or rows every sample shares
      // (positions).
      bool perSample = llvm::any_of(op->getOperands(), [&](Value v) {
        return activation.contains(v);
      });
      collective(Collective::AllGather, valueElements(r),
                 "gather the tokens' gradient for the table's", op,
                 TPCollective::Pass::Backward, /*sequenceSwap=*/false,
                 /*sequenceOnly=*/true, perSample);
    }
    return;
  }
  if (isa<MatmulOp, EmbeddingOp>(op) || op->getNumResults() == 0 ||
      llvm::none_of(op->getOperands(),
                    [&](Value v) { return tokens.contains(v); }))
    return;
  sequenceReduction(op);
  // Read only by matmuls that gather the tokens, the result's gradient
  // comes back whole: a parameter added to it gets a whole gradient.
  for (Value r : op->getResults())
    if (get(r).kind == Kind::Rep && hasTokensOf(r))
      tokens.insert(r);
  bool wholeGradient =
      llvm::all_of(op->getResult(0).getUsers(), [&](Operation *u) {
        auto m = dyn_cast<MatmulOp>(u);
        return !forwardOps->contains(u) ||
               (m && m.getLhs() == op->getResult(0) && gathersTokens(m));
      });
  for (Value v : op->getOperands()) {
    auto param = paramOf.find(v);
    if (param == paramOf.end())
      continue;
    auto how = decision.find(param->second);
    if (how != decision.end() && how->second != "replicated")
      continue;
    bool added = isa<AddOp, SubOp>(op) ||
                 (isa<LayerNormOp, RMSNormOp>(op) && v == op->getOperands().back() &&
                  op->getNumOperands() == 3);
    if (wholeGradient && added)
      continue;
    int64_t dim = rankOf(v) - 2;
    bool spans = dim >= 0 && shapeOf(v)[dim] != 1;
    // The gradient is the stored parameter's, whatever part the op reads.
    collective(spans ? Collective::AllGather : Collective::AllReduce,
               paramElements.lookup(param->second),
               spans ? "gather the gradient of " + param->second +
                           " from each rank's tokens"
                     : "complete the gradient of " + param->second +
                           " over each rank's tokens",
               op, TPCollective::Pass::Backward, /*sequenceSwap=*/false,
               /*sequenceOnly=*/true, /*perSample=*/false,
               /*oncePerStep=*/spans);
  }
}

/// Parameter views (reshape, transpose, cast) keep their parameter, whose
/// sharding is decided where the view is used.
static bool isParamView(Operation *op, const DenseMap<Value, std::string> &params) {
  return isa<ReshapeOp, TransposeOp, CastOp>(op) && op->getNumOperands() == 1 &&
         params.count(op->getOperand(0));
}

void Analysis::visit(Operation *op) {
  if (isParamView(op, paramOf)) {
    paramOf[op->getResult(0)] = paramOf.lookup(op->getOperand(0));
    return;
  }
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](MatmulOp m) { matmul(m); })
      .Case([&](ReshapeOp r) { reshape(r); })
      .Case([&](TransposeOp tr) {
        State s = get(tr.getInput());
        if (s.kind == Kind::Partial) {
          setAll(op, s);
          return;
        }
        if (s.kind != Kind::Shard)
          return;
        ArrayRef<int64_t> perm = tr.getPermutation();
        for (int64_t i = 0; i < static_cast<int64_t>(perm.size()); ++i)
          if (perm[i] == s.dim)
            state[tr.getResult()] = State::shard(i, s.stride);
      })
      .Case([&](EmbeddingOp e) {
        State ids = get(e.getIndices());
        if (ids.kind == Kind::Shard) {
          state[e.getResult()] = ids;
        } else if (paramOf.count(e.getTable()) && !keptWhole(e.getTable()) &&
                   divisible(e.getTable(), 0)) {
          splitParam(e.getTable(), "vocab", 0);
          state[e.getResult()] = State::partial();
        }
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto s) {
        unpartial(s.getInput(), op);
        State in = get(s.getInput());
        if (in.kind != Kind::Shard)
          return;
        if (in.dim == static_cast<int64_t>(s.getAxis())) {
          double rows =
              valueElements(s.getInput()) / shapeOf(s.getInput())[in.dim];
          collective(Collective::AllReduce,
                     statisticsElements(op, 0, in.dim),
                     "softmax statistics over the split axis", op,
                     TPCollective::Pass::Forward);
          if (needsGradient(s.getInput()))
            collective(Collective::AllReduce, rows,
                       "the softmax gradient's sum over the split axis", op,
                       TPCollective::Pass::Backward);
        }
        setAll(op, in);
      })
      .Case<LayerNormOp, RMSNormOp>([&](auto n) {
        Value x = n.getInput();
        if (get(x).kind == Kind::Partial)
          gather(x, op);
        State in = get(x);
        if (in.kind != Kind::Shard)
          return;
        if (in.dim >= static_cast<int64_t>(n.getAxis())) {
          collective(Collective::AllReduce, statisticsElements(op, 0, in.dim),
                     "normalization statistics over the split axis", op);
          for (Value v : op->getOperands().drop_front())
            splitParam(v, "split",
                       in.dim - static_cast<int64_t>(n.getAxis()));
        }
        state[op->getResult(0)] = in;
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>([&](auto red) {
        Value x = red.getInput();
        if (get(x).kind == Kind::Partial &&
            !isa<ReduceSumOp, ReduceMeanOp>(op))
          gather(x, op);
        State in = get(x);
        if (in.kind == Kind::Partial) {
          setAll(op, in);
          return;
        }
        if (in.kind != Kind::Shard)
          return;
        ArrayRef<int64_t> axes = red.getAxes();
        if (llvm::is_contained(axes, in.dim)) {
          if (isa<ReduceSumOp, ReduceMeanOp>(op)) {
            setAll(op, State::partial());
          } else {
            collective(Collective::AllReduce, valueElements(red.getResult()),
                       "reduction over the split axis", op);
          }
          return;
        }
        int64_t d = in.dim;
        if (!red.getKeepdims())
          d -= llvm::count_if(axes, [&](int64_t a) { return a < in.dim; });
        setAll(op, State::shard(d, in.stride));
      })
      .Case([&](CrossEntropyOp ce) {
        Value x = ce.getLogits();
        unpartial(x, op);
        unpartial(ce.getTargets(), op);
        State in = get(x);
        if (in.kind != Kind::Shard)
          return;
        int64_t last = rankOf(x) - 1;
        if (in.dim == last) {
          // Vocabulary-parallel cross-entropy: max, sum and target logit
          // (and the sum of logits with label smoothing).
          collective(Collective::AllReduce, statisticsElements(op, 0, last),
                     "cross-entropy statistics over the split classes", op,
                     TPCollective::Pass::Forward);
          return;
        }
        if (rankOf(ce.getResult()) == 0)
          setAll(op, State::partial());
        else
          setAll(op, in);
      })
      .Case([&](SplitOp s) {
        unpartial(s.getInput(), op);
        State in = get(s.getInput());
        if (in.kind != Kind::Shard)
          return;
        bool along = in.dim == static_cast<int64_t>(s.getAxis());
        bool ok = !along || llvm::all_of(s.getSizes(), [&](int64_t n) {
          return n >= t && n % t == 0;
        });
        if (!ok) {
          gather(s.getInput(), op);
          return;
        }
        // Along the split axis each piece is split in blocks (the
        // partitioner orders the producer's columns to match).
        for (Value r : op->getResults())
          state[r] = along ? block(r, in.dim) : in;
      })
      .Case([&](SliceOp sl) {
        // Like split: a slice along the split axis keeps it split when its
        // size divides (the partitioner places each rank's rows).
        unpartial(sl.getInput(), op);
        State in = get(sl.getInput());
        if (in.kind != Kind::Shard)
          return;
        ArrayRef<int64_t> in0 = shapeOf(sl.getInput());
        int64_t out = shapeOf(sl.getResult())[in.dim];
        bool whole = out == in0[in.dim];
        if (!whole && (sl.getStrides()[in.dim] != 1 || out < t || out % t)) {
          gather(sl.getInput(), op);
          return;
        }
        state[sl.getResult()] = whole ? in : block(sl.getResult(), in.dim);
      })
      .Case([&](ConcatOp c) {
        State first = get(c.getOperands().front());
        bool same = llvm::all_of(c.getOperands(), [&](Value v) {
          return get(v).sameSplit(first);
        });
        if (same && first.kind == Kind::Shard &&
            first.dim != static_cast<int64_t>(c.getAxis())) {
          setAll(op, first);
          return;
        }
        gatherAll(op);
      })
      .Case([&](AttentionOp a) {
        State q = get(a.getQuery()), k = get(a.getKey()), v = get(a.getValue());
        int64_t r = rankOf(a.getQuery());
        if (q.kind == Kind::Shard && q.dim < r - 2 && k.sameSplit(q) &&
            v.sameSplit(q)) {
          setAll(op, q);
          return;
        }
        gatherAll(op);
      })
      .Default([&](Operation *) {
        if (isElementwiseLike(op)) {
          elementwise(op);
          return;
        }
        gatherAll(op);
      });
}
} // namespace

TPProfile mlir::ober::planning::analyseTensorParallel(
    ArrayRef<Operation *> ops, int64_t degree, const Cluster &cluster,
    StringRef precision, double samples, const DenseSet<Value> &saved,
    const DenseSet<Operation *> &selective,
    const DenseSet<Operation *> &forward, const SegmentEnds &ends,
    const std::set<std::string> &whole) {
  Analysis a(degree, cluster, precision, samples, whole);
  a.out.degree = degree;
  a.forwardOps = &forward;
  if (ops.empty())
    return a.out;
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
  for (Operation *op : ops)
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || inSegment.contains(def) ||
          def->hasTrait<OpTrait::ConstantLike>())
        continue;
      Value root = viewRoot(v);
      if (a.paramOf.count(root)) {
        a.paramOf[v] = a.paramOf.lookup(root);
      } else {
        a.activation.insert(v);
      }
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
  // The previous segment's split of the activation it hands over, and
  // whether it is split by tokens.
  if (ends.in && ends.incoming.isSplit() && degree > 1)
    a.state[ends.in] = State::shard(ends.incoming.dim, ends.incoming.stride);
  if (ends.in && ends.incomingTokens)
    a.tokens.insert(ends.in);
  for (Operation *op : ops) {
    bool act = llvm::any_of(op->getOperands(), [&](Value v) {
      return a.activation.contains(v);
    });
    bool view = isParamView(op, a.paramOf);
    a.visit(op);
    if (!view)
      a.sequenceGradients(op);
    if (act)
      for (Value r : op->getResults())
        a.activation.insert(r);
    // Parameters an op reads whole stay replicated.
    if (!view)
      for (Value v : op->getOperands())
        if (a.paramOf.count(v))
          a.decision.emplace(a.paramOf.lookup(v), "replicated");
    // The class of this op's work and of the activations it saves.
    bool split = llvm::any_of(op->getResults(), [&](Value r) {
      return a.get(r).kind != Kind::Rep;
    });
    bool matrix = workOf(op).matmul;
    double seconds = opSeconds(op, cluster, precision, saved) / samples;
    bool kernel = endsKernel(op, saved);
    a.out.forwardKernels += kernel;
    if (selective.contains(op))
      a.out.selectiveKernels += kernel;
    ByTP &time = matrix ? a.out.forwardMatmul : a.out.forwardOther;
    double &slot = split ? time.split : (act && !matrix) ? time.seq : time.full;
    slot += seconds;
    if (selective.contains(op)) {
      (split ? a.out.selectiveTime.split
             : (act && !matrix) ? a.out.selectiveTime.seq
                                : a.out.selectiveTime.full) += seconds;
      if (matrix)
        a.out.selectiveFlops += workOf(op).flops / samples;
    }
    for (Value r : op->getResults()) {
      if (!saved.contains(r))
        continue;
      double n = valueBytes(r, precisionBytes(precision)) / samples;
      bool rSplit = a.get(r).kind != Kind::Rep;
      double &s = rSplit ? a.out.saved.split
                  : (act && !matrix) ? a.out.saved.seq
                                     : a.out.saved.full;
      s += n;
      if (selective.contains(op))
        (rSplit ? a.out.selectiveSaved.split
                : (act && !matrix) ? a.out.selectiveSaved.seq
                                   : a.out.selectiveSaved.full) += n;
    }
  }
  // What leaves the segment must be whole again, except a split
  // activation handed to the next segment (it stays split there).
  for (Operation *op : ops)
    for (Value r : op->getResults()) {
      bool returned = llvm::any_of(r.getUsers(), [](Operation *u) {
        return isa<func::ReturnOp>(u);
      });
      bool later = llvm::any_of(r.getUsers(), [&](Operation *u) {
        return forward.contains(u) && !inSegment.contains(u);
      });
      if (r == ends.out && !returned && a.get(r).kind == Kind::Shard)
        continue;
      if (returned || later)
        a.gather(r, op);
    }
  if (ends.out && a.get(ends.out).kind == Kind::Shard)
    a.out.boundary = {a.get(ends.out).dim, a.get(ends.out).stride};
  a.out.boundaryTokens = ends.out && a.tokens.contains(ends.out);
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
  return a.out;
}
